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
// of a locality or quarter (docs/spec/contract.md section 3). Anything else: 400 with suggestions.
export function resolveCommuneParam(gazetteer: Gazetteer, value: string, param = 'commune'): CommuneSelection {
  const place = gazetteer.resolve(value);
  if (place?.kind === 'commune') return { communes: [place.commune] };
  if (place?.kind === 'locality') {
    const every = { communes: placeCommunes(place), localities: [...new Set(place.options.map((o) => o.locality))], options: place.options };
    return { communes: place.communes, locality: place.locality, every };
  }
  const suggestions = gazetteer.suggest(value, 3);
  const hint = suggestions.length > 0 ? ` (did you mean ${suggestions.join(', ')}?)` : '';
  const message = `is not a commune, locality or quarter of Luxembourg${hint}`;
  throw new ApiError({ status: 400, code: 'invalid_parameter', detail: `${param} ${message}`, errors: [{ param, message }], extensions: { suggestions } });
}
