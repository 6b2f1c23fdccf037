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
];
// Charges added to the rent: "+ 200 € charges", "+ 150 €/mois de charges", "+ 150 € ch.",
// "zzgl. 200 € NK".
// The price is the rent without them.
const ADDED_CHARGES = String.raw`(?:\+|plus|zzgl\.?)\s*(?:(?:€|eur)\s*)?\d(?:[\d.,'’]|[\s\u00a0\u202f]+(?=[\d.,'’]))*(?:[.,]\s*-)?\s*(?:(?:€|eur|euros?|chf|sfr|fr\.|\$|usd|£|gbp)\s*)?(?:\/\s*(?:mois|monat|month))?\s*(?:de\s+|d['’]\s*)?(?:charges?|ch\.?|nk|nebenkosten|bk|betriebskosten)`;
// A note starts after a word's end, or at a "+" written against it ("1850€ HC+150€ ch.").
// The charges named before their figure: "+ charges 200 €", "+ ch. 150 €".
// Also an advance on them ("+ avance sur charges 150 €") and the German NK ("+ NK 150 €", "zzgl. NK
// 150 €") (an outside probe of stop 49).
const ADDED_CHARGES_NAMED_FIRST = String.raw`(?:\+|plus|zzgl\.?)\s*(?:(?:un\s+|une\s+)?(?:acompte|avance)\s+(?:sur|de)\s+)?(?:charges?|ch\.?|nk|nebenkosten|bk|betriebskosten)\s*:?\s*\d(?:[\d.,'’]|[\s\u00a0\u202f]+(?=[\d.,'’]))*(?:[.,]\s*-)?\s*(?:(?:€|eur|euros?)\s*)?(?:\/\s*(?:mois|monat|month))?`;
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
    String.raw`|(?:incl\.?|including)\s*(?:all\s+)?(?:bills|utilities)|(?:bills|utilities)\s+included|(?:charges?|ch\.?)\s*:?\s*${FIGURE}\s*${INCLUDED})`,
  'iu',
);
export const CHARGES_OUT = new RegExp(
  String.raw`(?<!\p{L})(?:h\.?\s?c(?!\p{L})|(?:hors|sans|plus|excl\.?|excluding)\s*charges|(?:charges?|ch\.?)\s+non\s+(?:compris|inclus)|hors\s+ch|charges\s+en\s+sus|\+\s*charges|charges?\s+excluded|(?:zzgl\.?|exkl\.?|plus|\+)\s*(?:nk|nebenkosten|bk|betriebskosten)|kalt(?:miete)?(?!\p{L}))` +
    // Charges added ("+ 200 € charges", "+ charges 200 €"), or stated beside ("charges: 200 €").
    // Not the charges said included after their figure ("charges 150 € comprises"); the bills not in it ("excl. bills").
    String.raw`|^\s*[,;/|–-]?\s*(?:${ADDED_CHARGES}|${ADDED_CHARGES_NAMED_FIRST})|(?<!dont\s+)(?<!\p{L})(?:charges?|nk|nebenkosten)\s*:?\s*\d(?!${AFTER_DIGIT}\s*${INCLUDED})` +
    String.raw`|(?<!\p{L})(?:(?:excl\.?|excluding|plus|\+)\s*(?:all\s+)?(?:bills|utilities)|(?:bills|utilities)\s+excluded)`,
  'iu',
);

export const NOTE_FIGURE = /\d(?:[\d.,'’]|[\s\u00a0\u202f]+(?=[\d.,'’]))*?(?=\s*(?:[.,]\s*-)?\s*(?:€|eur|euros?|\/|de\s|d['’]|charges?|ch\.?|nk|nebenkosten|bk|betriebskosten|$|\)))/iu;

// A price not given but asked for: "Prix sur demande", "P.O.A.", "price on application", "Preis
// auf Anfrage", "nous consulter". Refused, saying so, not as "not a number" (an outside probe of
// stop 48).
export const ON_REQUEST = /^\s*(?:(?:prix|preis|price|loyer|miete|mietpreis|kaufpreis)\s*:?\s*)?(?:p\.?\s?o\.?\s?a\.?|(?:on|upon)\s+(?:request|application)|sur\s+demande|auf\s+anfrage|nous\s+consulter)\s*$/i;
