// The notes agencies write after a price (what it covers, what is added to it), and which of
// them say the charges are in it or not: patterns only, read by parsePrice (values.ts).

// A figure of charges as written in a note, its currency and month optional: "150 €", "150,- €/mois".
// Its spaces only between its digits and marks ("1 600"), and the spaces around its currency in one
// run: a figure that could end in spaces beside "\s*" took 95 ms on "+ charges 1", 78 spaces and "€"
// (a re-check of stop 49); 8 ms now, the same readings on 750,000 generated prices.
const AFTER_DIGIT = String.raw`(?:[\d.,'’]|[\s\u00a0\u202f]+(?=[\d.,'’]))*(?:[.,]\s*-)?\s*(?:(?:€|eur|euros?)\s*)?(?:\/\s*(?:mois|monat|month))?`;
const FIGURE = String.raw`\d${AFTER_DIGIT}`;
// Said after such a figure: it is in the rent ("charges 150 € comprises").
const INCLUDED = String.raw`(?:comprises?|compris|incluses?|inclus|included)`;
// An advance on the charges, their word after it: "+ 180 € d'avances sur charges", "+ 180 € avance
// charges", "+ provision pour charges 180 €" (an outside probe of stop 50).
const ADVANCE = String.raw`(?:(?:avances?|acomptes?|provisions?)\s+(?:(?:sur|de|pour)\s+)?)?`;
// A figure with its currency, which must be written: the figure of an option or of charges after a
// separator, where a bare figure could be anything ("+ 2 parkings" counts places).
// Its marks and spaces only between digits: "1,250,000, 180 € charges" is no figure "250,000, 180".
const PRICED_DIGITS = String.raw`\d(?:[\d'’]|[.,](?=\d)|[\s\u00a0\u202f]+(?=\d))*`;
const PRICED_FIGURE = String.raw`${PRICED_DIGITS}(?:[.,]\s*-)?`;
const PRICED = String.raw`(?:(?:€|eur)\s*)?${PRICED_FIGURE}\s*(?:€|eur|euros?)`;
const PRICED_FIRST = String.raw`(?:€|eur)\s*${PRICED_FIGURE}`;
const MONTHLY = String.raw`(?:\s*\/\s*(?:mois|monat|month))?`;
// Charges after a separator, their figure and currency first, no "de": "HC / 180 € charges".
// (A comma after a word or a currency only, not a figure's: "1,250,000, 180 € charges" is refused. The
// separator is looked behind for only where a figure or currency starts: looked behind for at every
// place, across spaces, it took 4 ms on 100 spaces; matched itself, it let the dash of "1850,- / 180 €
// charges" be taken for a separator.)
const CHARGES_AFTER_SEPARATOR = String.raw`${PRICED}${MONTHLY}\s*(?:charges|nk|nebenkosten)`;
const SEPARATE_CHARGES = String.raw`(?=[€\d]|eur)(?<=(?:[;/|]|[^\d\s.,'’]\s*,)\s*)${CHARGES_AFTER_SEPARATOR}`;
// What may be let or sold beside a home, at its own price: a parking place, a garage, a cellar.
const OPTION = String.raw`(?:parkings?|garages?|emplacements?(?:\s+de\s+parking)?|places?\s+de\s+parking|box|stellpl(?:a|ä|ae)tz|tiefgaragenstellplatz|carport|cave|keller)`;
// An option offered at its own price: "+ garage 150 €", "(+ 150 € parking)", "zzgl. Stellplatz 120 €".
// Its figure is not the price, nor charges (values.ts refuses one as large as the price or larger).
// (A period after its word, "+ 150 € parking/mois", is the rent's, as after the charges' word.)
const OPTION_PRICED = String.raw`(?:\+|plus|zzgl\.?)\s*(?:${OPTION}\s*:?\s*(?:${PRICED}|${PRICED_FIRST})${MONTHLY}|(?:${PRICED}|${PRICED_FIRST})${MONTHLY}\s*(?:(?:de|pour|f(?:ü|ue)r|for)\s+|d['’]\s*)?${OPTION})`;
export const OPTION_NOTE = new RegExp(String.raw`^\s*(?:[,;/|–-]\s*)?${OPTION_PRICED}`, 'iu');
// The option's figure: the only one in its note ("€ 150" too, the currency before it).
export const OPTION_FIGURE = new RegExp(PRICED_DIGITS);
// A date written in figures, four-digit year: "01/12/2026", "1.1.2027". Only within a note that names
// it (when the home is free): its digits are never a figure of the price.
const DATE = String.raw`(?:0?[1-9]|[12]\d|3[01])[./-](?:0?[1-9]|1[0-2])[./-]20\d\d`;
// A note that ends in such a date: a period written after it is the price's, not the date's.
export const ENDS_IN_DATE = new RegExp(String.raw`${DATE}\s*$`);
const SOON = String.raw`(?:de\s+suite|tout\s+de\s+suite|imm[ée]diatement|maintenant|now|immediately|(?:ab\s+)?sofort)`;
const FROM_DATE = String.raw`(?:(?:au|le|d[èe]s\s+le|d[èe]s|[àa]\s+partir\s+du|[àa]\s+compter\s+du|from|ab|am|zum)\s+)?${DATE}`;
// Notes of stop 50 (an outside probe) that leave the figure the price.
const STOP50_NOTE_WORDS = [
  // An option at its own price (OPTION_NOTE), or one not in the price: "(hors emplacement)", "hors
  // charges et hors parking", "garage en sus".
  OPTION_PRICED,
  String.raw`(?:et\s+|und\s+|and\s+)?(?:hors|sans|excl\.?|excluding|ohne)\s+${OPTION}`, String.raw`${OPTION}\s+(?:en\s+sus|en\s+option|optionnel(?:le)?|non\s+(?:inclus|compris)|optional)`,
  // The charges after a separator, their figure and currency first and no "de": "HC / 180 € charges"
  // (not included, stated; "200 € de charges" reads as before); said not included after their figure:
  // "(charges 180 € non comprises)".
  SEPARATE_CHARGES,
  String.raw`(?:charges?|ch\.?)\s*:?\s*${FIGURE}\s*non\s+${INCLUDED}`,
  // Everything included: "tout compris", "all-in", "all inclusive" (the charges are in the rent).
  String.raw`tout\s+compris|all[\s-]?in(?:clusive)?`,
  // When the home is free: "- libre de suite", "disponible 01/01/2027", "libre au 01/12/2026", "ab sofort
  // frei", "frei ab 01.01.2027", "available now".
  String.raw`(?:libre|disponible|dispo\.?|available|frei|verf(?:ü|ue)gbar|bezugsfrei)\s+(?:${SOON}|${FROM_DATE})`,
  String.raw`(?:ab\s+sofort|sofort|ab\s+${DATE})\s+(?:frei|verf(?:ü|ue)gbar|bezugsfrei)`,
  // A price that may be discussed, named: "(prix négociable)"; a VAT rate before the tax, or the tax
  // said included after it: "(3% TVA)", "TVA 17% incl." (no figure of the price).
  String.raw`(?:prix|price|preis|loyer)\s+(?:n[ée]gociables?|negotiable|verhandelbar)`,
  String.raw`\d{1,2}(?:[.,]\d{1,2})?\s*%\s*(?:de\s+)?(?:tva|vat|mwst\.?|ust\.?)(?:\s+(?:incluses?|inclus|comprises?|compris|included|incl\.?|inkl\.?))?`,
  String.raw`(?:tva|vat|mwst\.?)\s*\d{1,2}(?:[.,]\d{1,2})?\s*%\s*(?:incl\.?|inkl\.?|excl\.?|exkl\.?)`,
  // Who pays the agency's fee, its rate too: "honoraires à la charge du vendeur", "frais d'agence 3% +
  // TVA à charge de l'acquéreur". (A fee's rate alone, "+ frais (5%)", is still refused.)
  String.raw`(?:frais\s+d['’]\s*agence|honoraires|commission)(?:\s+\d{1,2}(?:[.,]\d{1,2})?\s*%)?(?:\s*(?:\+|plus)\s*(?:tva|vat))?\s+(?:[àa]\s+(?:la\s+)?charge\s+(?:du|de\s+l['’]\s*|de\s+la)\s*|pay[ée]s?\s+par\s+(?:le|l['’])\s*)(?:vendeur|acqu[ée]reur|acheteur|bailleur|propri[ée]taire|locataire|preneur)`,
];

// What agencies write after a price about what it covers, which leaves the figure the price:
// charges (CC, HC, "charges comprises", "hors charges", German NK, kalt, warm), taxes (TTC,
// HT, net), the agency's fee (FAI, "frais d'agence inclus"), a footnote mark.
const NOTE_WORDS = [
  String.raw`c\.?\s?c\.?`, String.raw`h\.?\s?c\.?`, String.raw`t\.?t\.?c\.?`, String.raw`h\.?t\.?`, 'net', 'netto', String.raw`f\.?a\.?i\.?`,
  String.raw`(?:charges?|ch\.?)\s+(?:non\s+)?(?:comprises?|compris|incluses?|inclus|included|excluded)`, String.raw`hors\s+ch\.?`, String.raw`charges\s+en\s+sus`,
  // What else the rent covers ("parking inclus"), whether it may be discussed ("négociable",
  // "VB"), and a deposit counted in months ("+ 1 mois de caution", "2 mois de garantie",
  // "3 Monatsmieten Kaution"): no figure of the price (an outside probe of stop 47).
  String.raw`(?:parking|garage|emplacement|cave|box|stellplatz|chauffage|eau|électricité|internet)\s+(?:inclus|incluse?s?|compris|comprise?s?|included)`,
  String.raw`(?:inkl\.?|incl\.?|including)\s*(?:parking|garage|stellplatz|tiefgaragenstellplatz|cave|keller)`,
  String.raw`n[ée]gociables?|[àa]\s+(?:n[ée]gocier|d[ée]battre|discuter)|negotiable|verhandelbar|verhandlungsbasis|vhb|vb`,
  String.raw`(?:\+\s*)?(?:\d{1,2}|un|deux|trois|quatre)\s+mois\s+(?:de\s+)?(?:caution|garantie|d[ée]p[ôo]t(?:\s+de\s+garantie)?)`,
  String.raw`(?:caution|garantie|d[ée]p[ôo]t\s+de\s+garantie|kaution|deposit)\s*:?\s*(?:\d{1,2}|un|deux|trois|quatre)\s+(?:mois|monatsmieten?|months?)`,
  String.raw`(?:\+\s*)?(?:\d{1,2}|zwei|drei)\s+(?:monatsmieten?|mm)\s+kaution`, String.raw`(?:\+\s*)?\d{1,2}\s+months?['’]?\s+deposit`,
  // A flatshare's rent by the room: "650 € par chambre", "650 €/mois par chambre".
  String.raw`(?:par|\/)\s*chambre`,
  String.raw`(?:hors|sans|plus|\+|incl\.?|excl\.?|including|excluding)\s*charges`,
  String.raw`(?:frais\s+d['’]\s*agence|honoraires)\s+(?:inclus|compris)`, String.raw`hors\s+(?:frais(?:\s+d['’]\s*agence)?|honoraires)`,
  // The agency's fee on top of the price or not in it, the seller's net ("(frais d'agence en sus)", "+
  // frais", "net vendeur", "zzgl. Provision", "provisionsfrei"); a price that is fixed ("Festpreis", "(prix
  // ferme)") or may be discussed ("ONO": or nearest offer); a flat let furnished ("(meublé)"): no figure of the
  // price (an outside probe of stop 49).
  String.raw`(?:frais\s+d['’]\s*agence|honoraires)\s+(?:en\s+sus|non\s+(?:inclus|compris))`, String.raw`(?:\+|plus)\s*(?:frais(?:\s+d['’]\s*agence)?|honoraires)`,
  String.raw`net\s+vendeur`, String.raw`(?:zzgl\.?|inkl\.?|plus|\+)\s*(?:k(?:ä|ae)ufer|makler)?provision`, 'provisionsfrei', 'festpreis', String.raw`prix\s+ferme`,
  String.raw`o\.?\s?n\.?\s?o\.?`, String.raw`(?:non[\s-]?)?meubl[ée]e?s?`, String.raw`(?:un)?m(?:ö|oe)bliert`, String.raw`(?:un)?furnished`,
  // The bills, English for the charges: "incl. bills", "bills included", "+ bills".
  String.raw`(?:incl\.?|including|excl\.?|excluding|plus|\+)\s*(?:all\s+)?(?:bills|utilities)`, String.raw`(?:all\s+)?(?:bills|utilities)\s+(?:included|excluded)`,
  String.raw`(?:inkl\.?|zzgl\.?|exkl\.?|plus|\+)\s*(?:nk|nebenkosten|bk|betriebskosten)`,
  // The charges stated beside the rent: "(charges: 200 €)", "charges 150 €/mois",
  // "200 € de charges" (after a comma or a slash), "(dont 200 € de charges)" (included).
  // Not in the rent, said before or after their figure: "(hors charges 150 €)", "charges 150 € en
  // sus", "150 € de charges en sus" (an outside probe of stop 48).
  String.raw`(?:hors\s+)?(?:charges?|nk|nebenkosten)\s*:?\s*\d(?:[\d.,'’]|[\s\u00a0\u202f]+(?=[\d.,'’]))*(?:[.,]\s*-)?\s*(?:(?:€|eur|euros?)\s*)?(?:\/\s*(?:mois|monat|month))?(?:\s+en\s+sus)?`,
  String.raw`(?:dont\s+)?\d(?:[\d.,'’]|[\s\u00a0\u202f]+(?=[\d.,'’]))*(?:[.,]\s*-)?\s*(?:€|eur|euros?)\s*(?:\/\s*(?:mois|monat|month))?\s*(?:de\s+|d['’]\s*)charges?(?:\s+en\s+sus)?`,
  // The same, the charges named before their figure: in the rent ("dont charges 150 €", "(charges
  // 150 € comprises)"), or not, the figure in brackets after the note ("hors charges (150 €)") (an
  // outside probe of stop 49).
  String.raw`dont\s+(?:charges?|ch\.?|nk|nebenkosten)\s*:?\s*${FIGURE}`, String.raw`(?:charges?|ch\.?)\s*:?\s*${FIGURE}\s*${INCLUDED}`,
  String.raw`(?:hors\s+charges|hors\s+ch\.?|h\.?\s?c\.?)\s*\(\s*${FIGURE}\s*\)`,
  // Taxes: "TVA 3% incluse", "(TVA 17%)", "TVAC", "HTVA", "hors TVA", "inkl. MwSt.", "zzgl. 19 %
  // MwSt."; and the notary's fees: "(frais de notaire en sus)", "hors frais de notaire", "frais
  // d'acte en sus", "+ frais de notaire". No figure of the price: the percent is the tax's rate,
  // neither a price nor charges (an outside probe of stop 48).
  String.raw`(?:(?:hors|excl\.?|plus|\+)\s*)?(?:tva|vat)(?:\s*(?:[àa]\s+|de\s+)?\d{1,2}(?:[.,]\d{1,2})?\s*%)?(?:\s+(?:incluses?|inclus|comprises?|compris|included|en\s+sus|non\s+(?:incluses?|comprises?)))?`,
  String.raw`h\.?tva|tvac`, String.raw`(?:inkl\.?|incl\.?|zzgl\.?|exkl\.?|excl\.?|plus|\+)\s*(?:\d{1,2}(?:[.,]\d{1,2})?\s*%\s*)?(?:mwst|ust|vat|tva)\.?`,
  String.raw`(?:hors|sans|plus|\+|zzgl\.?)\s*frais\s+(?:de\s+notaire|d['’]\s*actes?|notari(?:aux|[ée]s))`,
  String.raw`frais\s+(?:de\s+notaire|d['’]\s*actes?|notari(?:aux|[ée]s))\s+(?:en\s+sus|inclus|compris|non\s+(?:inclus|compris)|r[ée]duits)`,
  String.raw`(?:zzgl\.?|inkl\.?|plus|\+)\s*(?:notarkosten|notargeb(?:ü|ue)hren)`,
  'kalt', 'warm', 'kaltmiete', 'warmmiete', String.raw`\*+`,
  ...STOP50_NOTE_WORDS,
];
// Charges added to the rent: "+ 200 € charges", "+ 150 €/mois de charges", "+ 150 € ch.",
// "zzgl. 200 € NK".
// The price is the rent without them.
const ADDED_CHARGES = String.raw`(?:\+|plus|zzgl\.?)\s*(?:(?:€|eur)\s*)?\d(?:[\d.,'’]|[\s\u00a0\u202f]+(?=[\d.,'’]))*(?:[.,]\s*-)?\s*(?:(?:€|eur|euros?|chf|sfr|fr\.|\$|usd|£|gbp)\s*)?(?:\/\s*(?:mois|monat|month))?\s*(?:de\s+|d['’]\s*)?${ADVANCE}(?:charges?|ch\.?|nk|nebenkosten|bk|betriebskosten|frais\s+communs)`;
// A note starts after a word's end, or at a "+" written against it ("1850€ HC+150€ ch.").
// The charges named before their figure: "+ charges 200 €", "+ ch. 150 €".
// Also an advance on them ("+ avance sur charges 150 €") and the German NK ("+ NK 150 €", "zzgl. NK
// 150 €") (an outside probe of stop 49).
const ADDED_CHARGES_NAMED_FIRST = String.raw`(?:\+|plus|zzgl\.?)\s*(?:(?:un\s+|une\s+)?${ADVANCE})?(?:charges?|ch\.?|nk|nebenkosten|bk|betriebskosten|frais\s+communs)\s*:?\s*\d(?:[\d.,'’]|[\s\u00a0\u202f]+(?=[\d.,'’]))*(?:[.,]\s*-)?\s*(?:(?:€|eur|euros?)\s*)?(?:\/\s*(?:mois|monat|month))?`;
// (The separator's spaces are written "\s*(?:[,;/|–-]\s*)?", not "\s*[,;/|–-]?\s*": the same texts, but
// two runs of spaces side by side made 100 characters of spaces take 10 ms; found checking stop 49's forms.)
export const PRICE_NOTE = new RegExp(String.raw`\s*(?:[,;/|–-]\s*)?(?:(?<!\p{L})|(?=\+))(?:${[...NOTE_WORDS, ADDED_CHARGES, ADDED_CHARGES_NAMED_FIRST].join('|')})\s*$`, 'iu');
// A note in brackets: "(frais d'agence inclus)", "(+ 150 € charges)".
export const BRACKETED = /\s*\(([^()]*)\)\s*$/;

// Which notes say the charges are in the price, and which that they are not.
// Also the bills included ("incl. bills") and charges whose figure is said to be included ("(charges
// 150 € comprises)") (an outside probe of stop 49).
export const CHARGES_IN = new RegExp(
  String.raw`(?<!\p{L})(?:c\.?\s?c(?!\p{L})|(?:charges?|ch\.?)\s+(?:comprises?|compris|incluses?|inclus|included)|(?:incl\.?|including|inkl\.?)\s*(?:charges|nk|nebenkosten|bk|betriebskosten)|warm(?:miete)?(?!\p{L})|dont\s` +
    String.raw`|(?:incl\.?|including)\s*(?:all\s+)?(?:bills|utilities)|(?:bills|utilities)\s+included|(?:charges?|ch\.?)\s*:?\s*${FIGURE}\s*${INCLUDED}|tout\s+compris|all[\s-]?in(?:clusive)?(?!\p{L}))`,
  'iu',
);
export const CHARGES_OUT = new RegExp(
  String.raw`(?<!\p{L})(?:h\.?\s?c(?!\p{L})|(?:hors|sans|plus|excl\.?|excluding)\s*charges|(?:charges?|ch\.?)\s+non\s+(?:compris|inclus)|hors\s+ch|charges\s+en\s+sus|\+\s*charges|charges?\s+excluded|(?:zzgl\.?|exkl\.?|plus|\+)\s*(?:nk|nebenkosten|bk|betriebskosten)|kalt(?:miete)?(?!\p{L}))` +
    // Charges added ("+ 200 € charges", "+ charges 200 €"), or stated beside ("charges: 200 €").
    // Not the charges said included after their figure ("charges 150 € comprises"); the bills not in it ("excl. bills").
    String.raw`|^\s*[,;/|–-]?\s*(?:${ADDED_CHARGES}|${ADDED_CHARGES_NAMED_FIRST})|(?<!dont\s+)(?<!\p{L})(?:charges?|nk|nebenkosten)\s*:?\s*\d(?!${AFTER_DIGIT}\s*${INCLUDED})` +
    String.raw`|(?<!\p{L})(?:(?:excl\.?|excluding|plus|\+)\s*(?:all\s+)?(?:bills|utilities)|(?:bills|utilities)\s+excluded)` +
    // (Stop 50: "HC / 180 € charges".)
    String.raw`|^\s*[,;/|]\s*${CHARGES_AFTER_SEPARATOR}`,
  'iu',
);

export const NOTE_FIGURE = /\d(?:[\d.,'’]|[\s\u00a0\u202f]+(?=[\d.,'’]))*?(?=\s*(?:[.,]\s*-)?\s*(?:€|eur|euros?|\/|de\s|d['’]|charges?|ch\.?|nk|nebenkosten|bk|betriebskosten|$|\)))/iu;

// A price not given but asked for: "Prix sur demande", "P.O.A.", "price on application", "Preis
// auf Anfrage", "nous consulter". Refused, saying so, not as "not a number" (an outside probe of
// stop 48).
export const ON_REQUEST = /^\s*(?:(?:prix|preis|price|loyer|miete|mietpreis|kaufpreis)\s*:?\s*)?(?:p\.?\s?o\.?\s?a\.?|(?:on|upon)\s+(?:request|application)|sur\s+demande|auf\s+anfrage|nous\s+consulter)\s*$/i;
