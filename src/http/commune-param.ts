import { placeCommunes, type Gazetteer } from '../reference/gazetteer.js';
import { ApiError } from './errors.js';

export interface CommuneSelection {
  communes: string[];
  // The locality the name stands for (the first of the reference data that bears it).
  locality?: string;
  // Every locality the name may be, and their communes: `locality` alone, or several where
  // several bear the name ("Bonnevoie": both Bonnevoie quarters of Luxembourg; "Bruch": a
  // quarter of Esch-sur-Alzette and Brouch in Helperknapp). A listing search matches any of
  // them; market figures are kept per locality and answer for `locality`, which they name.
  every?: { communes: string[]; localities: string[]; options: { locality: string; commune: string }[] };
}

// `commune=`: any language form, case, accents, hyphens/spaces of a commune, or the name
// of a locality or quarter (docs/spec/contract.md section 3). Anything else: 400 with suggestions,
// communes alone for a parameter that takes only communes (`communesOnly`: the market's history,
// which refuses a locality; an outside probe of stop 53 was sent from "Nowhere" to "Nocher", and
// refused there).
export function resolveCommuneParam(gazetteer: Gazetteer, value: string, param = 'commune', communesOnly = false): CommuneSelection {
  const place = gazetteer.resolve(value);
  if (place?.kind === 'commune') return { communes: [place.commune] };
  if (place?.kind === 'locality') {
    const every = { communes: placeCommunes(place), localities: [...new Set(place.options.map((o) => o.locality))], options: place.options };
    return { communes: place.communes, locality: place.locality, every };
  }
  const suggestions = gazetteer.suggest(value, 3, communesOnly);
  const hint = suggestions.length > 0 ? ` (did you mean ${suggestions.join(', ')}?)` : '';
  const message = `is not a ${communesOnly ? 'commune' : 'commune, locality or quarter'} of Luxembourg${hint}`;
  throw new ApiError({ status: 400, code: 'invalid_parameter', detail: `${param} ${message}`, errors: [{ param, message }], extensions: { suggestions } });
}
