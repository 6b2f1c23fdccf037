// The names of places that the reference data lacks, or that several communes answer to: read by the
// gazetteer (gazetteer.ts) beside the reference data's own.

// Common ways of writing the capital and a few other names that the reference data lacks.
export const EXTRA_COMMUNE_ALIASES: Record<string, string[]> = {
  Luxembourg: ['Luxembourg-Ville', 'Luxembourg Ville', 'Ville de Luxembourg', 'Luxembourg City', 'Stad Lëtzebuerg', 'Lëtzebuerg-Stad', 'Lëtzebuerg Stad', 'Luxemburg-Stadt', 'Luxemburg Stadt', 'Stadt Luxemburg', 'Lux-Ville', 'Lux', 'Luxbg'],
  'Esch-sur-Alzette': ['Esch', 'Esch-Alzette'],
  'Redange/Attert': ['Redange', 'Redange-sur-Attert'],
  'Mondorf-les-Bains': ['Mondorf'],
  'Lac de la Haute-Sûre': ['Haute-Sûre'],
  'Erpeldange-sur-Sûre': ['Erpeldange'],
  'Reckange-sur-Mess': ['Reckange'],
  // Helfent (Helfenterbruck, Luxembourgish Helfenterbréck), Bertrange's side of the Route
  // d'Arlon, and Strassen written with its Bourgfelt: no locality of their own in the reference
  // data (an outside probe of stop 47 found them unknown places).
  Bertrange: ['Helfent', 'Helfenterbruck', 'Helfenterbréck'],
  Strassen: ['Strassen-Bourgfelt'],
};

// Names of quarters that the reference data lacks: the business district of Gasperich, the
// Luxembourgish names of the City's quarters (an outside probe's feed wrote Kierchbierg and
// Lampertsbierg), of Belvaux and of Oberpallen, the French name of Lalleng (Esch-sur-Alzette).
// An outside probe of stop 47 found more refused with a valid postcode: the French Obercorn and
// Niedercorn and the Luxembourgish Uewerkuer and Nidderkuer (Differdange), Téiteng (Tétange),
// Hueschtert (both Hosterts, Niederanven's and Rambrouch's: the postcode or the coordinates
// tell, as for Hostert), Stadgrond (Grund) and Kirchberg-Kiem (the Kiem, a part of Kirchberg;
// not "Kiem" alone, which is also a street of Strassen).
export const EXTRA_LOCALITY_ALIASES: Record<string, string[]> = {
  Gasperich: ["Cloche d'Or", 'Ban de Gasperich', 'Gaasperech'],
  'Bonnevoie-Nord / Verlorenkost': ['Bouneweg'],
  'Bonnevoie-Sud': ['Bouneweg'],
  Cents: ['Zens'],
  Cessange: ['Zéisseng'],
  Dommeldange: ['Dummeldeng'],
  Eich: ['Eech'],
  Grund: ['Grond', 'Gronn', 'Stadgrond'],
  Hollerich: ['Hollerech'],
  Kirchberg: ['Kierchbierg', 'Kirchberg-Kiem'],
  Limpertsberg: ['Lampertsbierg'],
  Merl: ['Märel'],
  Muhlenbach: ['Millebaach'],
  'Neudorf / Weimershof': ['Neiduerf', 'Weimeschhaff'],
  Pfaffenthal: ['Pafendall'],
  Pulvermuhl: ['Polvermillen'],
  'Rollingergrund / Belair-Nord': ['Rollengergronn'],
  // Its other names in the reference data (Centre, Oberstadt) in the other words for a town's centre
  // (the re-check of stop 50: "Luxembourg Zentrum" was the whole City, "Luxembourg Centre" this quarter).
  'Ville Haute': ['Uewerstad', 'Zentrum', 'Stadtzentrum'],
  // And the station's quarter by its German name, as Zentrum (the second re-check of stop 50: the whole City).
  Gare: ['Bahnhof'],
  Weimerskirch: ['Weimeschkierch'],
  Belvaux: ['Bieles'],
  // The campus and its station's name (an outside probe of stop 50: an unknown place).
  Belval: ['Belval-Université', 'Belval-Universität'],
  Lalleng: ['Lallange'],
  Oberpallen: ['Uewerpallen'],
  Oberkorn: ['Obercorn', 'Uewerkuer'],
  Niederkorn: ['Niedercorn', 'Nidderkuer'],
  Tétange: ['Téiteng'],
  Hostert: ['Hueschtert'],
};

// Short names that several communes answer to: "Esch" is mostly Esch-sur-Alzette, but a
// postcode or coordinates in the north make it Esch-sur-Sûre. The first is what the name
// stands for when nothing says otherwise (it is also an alias above). "Erpeldange" and
// "Reckange" are communes' short names and villages of other communes too (Bous-Waldbredimus's
// and Wiltz's Erpeldange, Mersch's Reckange): the postcode or the coordinates tell (an outside
// probe: "Erpeldange" with the commune's own coordinates was rejected as a village of two other
// communes, "Reckange" with Reckange-sur-Mess's was placed in Mersch, 20 km away).
export const SHARED_SHORT_NAMES: Record<string, string[]> = {
  esch: ['Esch-sur-Alzette', 'Esch-sur-Sûre'],
  erpeldange: ['Erpeldange-sur-Sûre', 'Bous-Waldbredimus', 'Wiltz'],
  reckange: ['Reckange-sur-Mess', 'Mersch'],
};
