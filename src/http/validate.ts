import { z } from 'zod';
import { EARLIEST_DAY } from '../domain/market.js';
import { cutText, graphemes, NAME_CHARACTER_RULES } from '../lib/text.js';
import { ApiError, type ParamError } from './errors.js';

// Query-string parameter types (docs/spec/contract.md section 3). Every value arrives as a string;
// these schemas turn it into a typed value or a message that reads after the parameter's
// name ("per_page must be between 1 and 100").
//
// Each also carries, as zod metadata, the OpenAPI schema of the value it accepts (built from
// the same bounds), which the OpenAPI document reads: a parameter added to a query schema
// appears in the document with its rules.

export interface ParamDoc {
  description?: string;
  default?: unknown;
  example?: unknown;
}

export interface QueryParamMeta {
  schema: Record<string, unknown>;
  description?: string;
  example?: unknown;
}

function documented<T extends z.ZodType>(schema: T, openapi: Record<string, unknown>, doc: ParamDoc): T {
  const meta: QueryParamMeta = {
    schema: { ...openapi, ...(doc.default !== undefined ? { default: doc.default } : {}) },
    description: doc.description,
    example: doc.example,
  };
  return schema.meta({ queryParam: meta }) as T;
}

export function queryParamMeta(field: z.ZodType): QueryParamMeta | undefined {
  let s: z.ZodType = field;
  if (s instanceof z.ZodOptional) s = s.unwrap() as z.ZodType;
  return (s.meta() as { queryParam?: QueryParamMeta } | undefined)?.queryParam;
}

// A decimal's value, its digits being plain: one too long for a double (about 310 digits) is
// Infinity, which the bounds would call "not a finite number" (an outside probe of stop 63); the
// largest double of its sign instead, which every bound judges as out of range.
const finiteNumber = (s: string): number => {
  const n = Number(s);
  return Number.isFinite(n) ? n : s.startsWith('-') ? -Number.MAX_VALUE : Number.MAX_VALUE;
};

export function intParam(min: number, max: number, doc: ParamDoc = {}) {
  return documented(intParamSchema(min, max), { type: 'integer', minimum: min, maximum: max }, doc);
}

function intParamSchema(min: number, max: number) {
  return z
    .string()
    .regex(/^-?\d+$/, 'must be a whole number')
    // `-0` is written with a sign as a negative number is, and refused as one (as `+5` is for its
    // sign; an outside probe of stop 51 found `min_rooms=-0` served).
    .refine((s) => min < 0 || !/^-0+$/.test(s), min === 0 ? 'must not be negative' : `must be between ${min} and ${max}`)
    .transform(finiteNumber)
    .pipe(
      z
        .number()
        .min(min, min === 0 ? 'must not be negative' : `must be between ${min} and ${max}`)
        .max(max, `must be between ${min} and ${max}`),
    );
}

export function numberParam(min: number, max: number, opts: { exclusiveMin?: boolean } = {}, doc: ParamDoc = {}) {
  const bounds = opts.exclusiveMin ? { exclusiveMinimum: min, maximum: max } : { minimum: min, maximum: max };
  return documented(numberParamSchema(min, max, opts), { type: 'number', ...bounds }, doc);
}

const DECIMAL = /^-?(?:\d+(?:\.\d*)?|\.\d+)$/;

function numberParamSchema(min: number, max: number, opts: { exclusiveMin?: boolean }) {
  const range = `must be ${opts.exclusiveMin ? 'greater than' : 'between'} ${min}${opts.exclusiveMin ? ' and at most' : ' and'} ${max}`;
  const n = z.number();
  return z
    .string()
    .regex(DECIMAL, 'must be a decimal number')
    // A decimal just beyond a bound reads as the bound once made a double (90.000000000000001 is
    // 90): judged on its digits (an outside probe: lat=90.000000000000001 was served).
    .refine((s) => !DECIMAL.test(s) || !(beyondAsDouble(s, max, 'max') || (!opts.exclusiveMin && beyondAsDouble(s, min, 'min'))), range)
    .transform(finiteNumber)
    .pipe((opts.exclusiveMin ? n.gt(min, range) : n.min(min, range)).max(max, range));
}

// Is the decimal `s` beyond the whole number `bound` (above it as a maximum, below it as a
// minimum) while it reads as the bound once made a double? Judged on its digits.
function beyondAsDouble(s: string, bound: number, side: 'min' | 'max'): boolean {
  if (!Number.isInteger(bound) || Number(s) !== bound) return false;
  const negative = s.startsWith('-');
  const [whole, fraction = ''] = s.replace(/^-/, '').split('.');
  const w = Number(whole || '0');
  const further = w > Math.abs(bound) || (w === Math.abs(bound) && /[1-9]/.test(fraction));
  return side === 'max' ? bound >= 0 && !negative && further : bound <= 0 && negative && further;
}

export function boolParam(doc: ParamDoc = {}) {
  return documented(boolParamSchema(), { type: 'boolean' }, { ...doc, description: `${doc.description ?? ''} Accepts true, false (any letter case), 1 or 0.`.trim() });
}

// Letter case folded for the ASCII letters only: JavaScript's toUpperCase() makes the long s
// (ſ) an S and toLowerCase() the Kelvin sign (K) a k, so `ſale` read as SALE (an outside probe).
const asciiLower = (s: string): string => s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
const asciiUpper = (s: string): string => s.replace(/[a-z]+/g, (m) => m.toUpperCase());

function boolParamSchema() {
  return z
    .string()
    .transform(asciiLower)
    .pipe(z.enum(['true', 'false', '1', '0'], 'must be true, false, 1 or 0'))
    .transform((s) => s === 'true' || s === '1');
}

// Documented with JSON Schema's maxLength, which counts code points, at the bound in UTF-16
// code units (four per character), so that a client checking a value against the OpenAPI
// document never refuses one the API takes (an outside probe of stop 58: 100 letters with an
// accent each, 200 code points, are 100 characters); the description says the rule.
export function textParam(maxLength: number, doc: ParamDoc = {}) {
  return documented(textParamSchema(maxLength), textParamOpenApi(maxLength), { ...doc, description: `${doc.description ?? ''} ${textParamRule(maxLength)}`.trim() });
}

// A text parameter's schema in the OpenAPI document, and the rule its description states (for a
// route that describes the parameter its own way: src/http/schemas/market.ts).
export const textParamOpenApi = (maxLength: number) => ({ type: 'string', minLength: 1, maxLength: 4 * maxLength });
export const textParamRule = (maxLength: number) => `At most ${maxLength} characters as people count them (a letter with its accents, an emoji: one) and ${4 * maxLength} UTF-16 code units.`;

function textParamSchema(maxLength: number) {
  return NAME_CHARACTER_RULES.reduce((schema, rule) => schema.refine((s) => !rule.refused(s), rule.message), z.string())
    // The code units counted as sent, spaces at the ends too: the bound the OpenAPI document
    // states (an outside re-check of stop 58: 5,000 spaces after a source were taken).
    .refine((s) => s.length <= 4 * maxLength, `must be at most ${4 * maxLength} UTF-16 code units in all (and ${maxLength} characters)`)
    .transform((s) => s.trim())
    // Characters as people count them (an outside probe of stop 51: 60 letters each with a
    // combining accent were "more than 100 characters"), and at most four UTF-16 units each on
    // average (a bound on the text segmented), each limit named when it is the one passed (an
    // outside probe of stop 55: one letter and 400 accents was "more than 100 characters").
    .pipe(
      z
        .string()
        .min(1, 'must not be empty')
        .refine((s) => s.length <= maxLength || graphemes(s) <= maxLength, `must be at most ${maxLength} characters`),
    );
}

// A calendar day, YYYY-MM-DD (a real date: 2026-02-30 is refused), not before EARLIEST_DAY.
// The checks after the form's apply only to a string of that form: `+2026-11-28` is "must be
// a date", not also "not a calendar date" and "before 1900-01-01".
const DAY_FORM = /^\d{4}-\d{2}-\d{2}$/;

export function dateParam(doc: ParamDoc = {}) {
  const schema = z
    .string()
    .regex(DAY_FORM, 'must be a date, YYYY-MM-DD')
    .refine((s) => {
      if (!DAY_FORM.test(s)) return true;
      const d = new Date(`${s}T00:00:00Z`);
      return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
    }, 'is not a calendar date')
    .refine((s) => !DAY_FORM.test(s) || s >= EARLIEST_DAY, `must not be before ${EARLIEST_DAY}`);
  return documented(schema, { type: 'string', format: 'date' }, { ...doc, description: `${doc.description ?? ''} Not before ${EARLIEST_DAY}.`.trim() });
}

// A value the route checks itself (an opaque token): any string reaches it as it was sent.
export function opaqueParam(maxLength: number, doc: ParamDoc = {}) {
  return documented(z.string(), { type: 'string', maxLength }, doc);
}

export function enumParam<const T extends readonly [string, ...string[]]>(values: T, opts: { caseInsensitive?: boolean } = {}, doc: ParamDoc = {}) {
  const msg = `must be one of ${values.join(', ')}`;
  const lower = values.every((v) => v === v.toLowerCase());
  const schema = z
    .string()
    .transform((s) => (opts.caseInsensitive ? (lower ? asciiLower(s) : asciiUpper(s)) : s))
    .pipe(z.enum(values, msg));
  const description = opts.caseInsensitive ? `${doc.description ?? ''} Any letter case.`.trim() : doc.description;
  return documented(schema, { type: 'string', enum: [...values] }, { ...doc, description });
}

type Shape = z.ZodObject<z.ZodRawShape>;

// "price_min" -> "min_price": the same words in another order, or a close spelling.
function closest(name: string, allowed: string[]): string | undefined {
  const words = name.toLowerCase().split(/[_-]/).sort().join('_');
  return allowed.find((a) => a.split('_').sort().join('_') === words) ?? allowed.find((a) => a.toLowerCase() === name.toLowerCase());
}

const MAX_NAMED = 20;

// Validates a parsed query string against an object schema: unknown and repeated
// parameters first, then every field, each problem naming its parameter.
export function validateQuery<S extends Shape>(schema: S, query: Record<string, unknown>, refine?: z.ZodType): z.infer<S> {
  const allowed = Object.keys(schema.shape);
  const unknown = Object.keys(query).filter((k) => !allowed.includes(k));
  if (unknown.length > 0) {
    // Named back as sent, up to a point: a name cut at 64 characters, the first 20 names.
    const errors: ParamError[] = unknown.slice(0, MAX_NAMED).map((name) => {
      const hint = closest(name, allowed);
      const param = name === '' ? '(a name left empty)' : cutText(name, 64);
      return { param, message: `is not a known parameter${hint ? ` (did you mean ${hint}?)` : ''}` };
    });
    const first = errors[0];
    // The others are counted (each is in `errors`, up to 20).
    const others = unknown.length - 1;
    const more = others > 0 ? ` (and ${others} more unknown parameter${others === 1 ? '' : 's'}${unknown.length > MAX_NAMED ? `, the first ${MAX_NAMED} in errors` : ': see errors'})` : '';
    throw new ApiError({
      status: 400,
      code: 'unknown_parameter',
      detail: `${first.param} ${first.message}${more}; ${allowed.length > 0 ? `allowed parameters: ${allowed.join(', ')}` : 'this endpoint takes no query parameters'}`,
      errors,
      extensions: { allowed_parameters: allowed },
    });
  }
  const repeated = Object.entries(query)
    .filter(([, v]) => typeof v !== 'string')
    .map(([param]) => ({ param, message: 'was given more than once' }));
  if (repeated.length > 0) {
    throw new ApiError({ status: 400, code: 'invalid_parameter', detail: `${repeated[0].param} ${repeated[0].message}`, errors: repeated });
  }
  const parsed = (refine ?? schema).safeParse(query);
  if (!parsed.success) throw zodToApiError(parsed.error);
  return parsed.data as z.infer<S>;
}

// zod's own wording of a type mismatch ("Invalid input: expected string, received
// undefined") in the words of the other messages: what the parameter must be.
function issueMessage(i: z.core.$ZodIssue): string {
  const m = /^Invalid input: expected (\w+), received (\w+)$/.exec(i.message);
  if (!m) return i.message;
  if (m[2] === 'undefined') return 'is required';
  if (m[1] === 'number') return 'must be a finite number';
  return `must be a ${m[1]}`;
}

export function zodToApiError(error: z.ZodError): ApiError {
  const errors: ParamError[] = error.issues.map((i) => ({ param: String(i.path[0] ?? 'query'), message: issueMessage(i) }));
  const detail = errors.map((e) => `${e.param} ${e.message}`).join('; ');
  return new ApiError({ status: 400, code: 'invalid_parameter', detail, errors });
}
