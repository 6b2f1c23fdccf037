import { parse, type ParsedUrlQuery } from 'node:querystring';
import { ApiError } from './errors.js';
import { BARE_PERCENT } from '../lib/text.js';

// The app's query parser: node's querystring (Express's 'simple': a repeated parameter
// arrives as an array, which validation refuses), with two of its leniencies removed.
// - Its limit of 1,000 parameters dropped everything past it without a word, so a request
//   padded with 1,000 `&` lost its filters and its unknown parameters unchecked (a URL is
//   bounded anyway: headers past 16 KB are 431).
// - A percent-encoding that is not UTF-8 (`%FF`) was kept as the byte read as Latin-1; it is
//   refused as the path's is, 400 invalid_parameter.
export function parseQuery(str: string): ParsedUrlQuery {
  let wellFormed = true;
  // querystring catches what its decoder throws and falls back to its lenient unescape, so a
  // failure is noted here and refused after the parse.
  const decode = (text: string): string => {
    try {
      return decodeURIComponent(text);
    } catch (err) {
      wellFormed = false;
      throw err;
    }
  };
  const query = parse(str, '&', '=', { maxKeys: 0, decodeURIComponent: decode });
  // querystring decodes only what holds a "%" and two hex digits, so a bare "%" (`?%=1`,
  // `?limit=5%`) arrived as written (an outside probe); it is not URL syntax either way.
  if (!wellFormed || BARE_PERCENT.test(str)) {
    throw new ApiError({
      status: 400,
      code: 'invalid_parameter',
      detail: BARE_PERCENT.test(str)
        ? 'The query string holds a "%" not followed by two hexadecimal digits: write a literal % as %25'
        : 'The query string holds a percent-encoding that is not UTF-8: write each value in UTF-8 and percent-encode its bytes',
    });
  }
  return query;
}
