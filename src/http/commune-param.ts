import type { Gazetteer } from '../reference/gazetteer.js';
import { ApiError } from './errors.js';

export interface CommuneSelection {
  communes: string[];
  locality?: string;
}

// `commune=`: any language form, case, accents, hyphens/spaces of a commune, or the name
// of a locality or quarter (docs/spec/contract.md section 3). Anything else: 400 with suggestions.
export function resolveCommuneParam(gazetteer: Gazetteer, value: string, param = 'commune'): CommuneSelection {
  const place = gazetteer.resolve(value);
  if (place?.kind === 'commune') return { communes: [place.commune] };
  if (place?.kind === 'locality') return { communes: place.communes, locality: place.locality };
  const suggestions = gazetteer.suggest(value, 3);
  const hint = suggestions.length > 0 ? ` (did you mean ${suggestions.join(', ')}?)` : '';
  const message = `is not a commune, locality or quarter of Luxembourg${hint}`;
  throw new ApiError({ status: 400, code: 'invalid_parameter', detail: `${param} ${message}`, errors: [{ param, message }], extensions: { suggestions } });
}
