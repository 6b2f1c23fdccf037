// The periods of a price as agencies write them: after the figure in a price text (values.ts), and
// in a feed's own period field (normalize.ts), one list for both (an outside probe of stop 50 found
// a JSON period "pcm" refused that a price text read).

// "/mois", "par mois", "per month", "p.m.", "p/m", "pcm", "/Monat", "mtl.", "/semaine", "per week",
// "/Woche"; after a slash only, "/Mt." (Monat) and "/mo" (an outside probe of stop 48); and a year
// ("/an", "per year", "/Jahr", "p.a."), read only to say so: a yearly price is refused, not divided.
// Also "p/month" (p/ for per) and "Monatsmiete" (a month's rent) (an outside probe of stop 50).
const YEAR_WORDS = String.raw`an|année|annee|annuel(?:le)?|year|yearly|annual|annually|annum|jahr|jährlich|jahrlich|p\.\s?a`;
export const PRICE_PERIOD = new RegExp(
  String.raw`(?:\bp\/|\/|\bpar\b|\bper\b|\bpro\b|\ba\b|\bla\b|\bl['’])?\s*\b(mois|mensuel|month|monthly|monat|monatlich|monatsmiete|mtl|(?<=\/\s*)(?:mt|mo)|p\.?\s?m|p\/m|pcm|semaine|sem|hebdomadaire|week|weekly|woche|wöchentlich|${YEAR_WORDS})\b\.?\s*$`,
  'i',
);
export const WEEKLY = new Set(['semaine', 'sem', 'hebdomadaire', 'week', 'weekly', 'woche', 'wöchentlich']);
export const YEARLY = new RegExp(`^(?:${YEAR_WORDS})$`, 'i');
// The period said before the figure: "mensuel 1 850 €", "monatlich: 1850".
export const PERIOD_FIRST = /^\s*(mensuel|monthly|monatlich|hebdomadaire|weekly|wöchentlich)\s*:?\s*(?=\S)/i;

// A feed's period field: "month", "per_month", "Monat", "pcm", "p.m.", "/mo", "months", "1 month",
// "per calendar month", "weekly", "pw", "wk", "p.w."; a year only to say so. Undefined: a word this
// does not know.
const FIELD_WEEK = /^(?:w|pw|p\.?\s?w\.?|wk|wks|weeks|semaines|7 days)$/;
const FIELD_MONTH = /^(?:m|mo|mt|mth|months|calendar month|30 days|mensuelle|p\.?\s?m\.?)$/;
const FIELD_YEAR = /^(?:y|yr|p\.?\s?a\.?)$/;
export function periodOfField(text: string): 'month' | 'week' | 'year' | undefined {
  const words = text.trim().toLowerCase().replace(/[\s_-]+/g, ' ').replace(/^(?:(?:per|par|pro|a|la|1|one) |\/ ?)/, '');
  if (FIELD_WEEK.test(words)) return 'week';
  if (FIELD_MONTH.test(words)) return 'month';
  if (FIELD_YEAR.test(words) || YEARLY.test(words)) return 'year';
  const said = PRICE_PERIOD.exec(words);
  if (!said || said.index !== 0) return undefined;
  const word = said[1].toLowerCase();
  if (YEARLY.test(word)) return 'year';
  return WEEKLY.has(word) ? 'week' : 'month';
}
