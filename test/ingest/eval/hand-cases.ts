import { writeCsv, writeJson, writeOpenImmo, type AgencyRecord, type FeedFile } from './feed-writers.js';

// Hand-made hard cases for cross-source deduplication (issue 13): literal records, each
// case with the truth (which listings are one property: the letter after the case id)
// and why it is hard. The agencies are those of the second set, with the same habits
// (see second-set.ts): wohnen-lux and mosel-wohnen write OpenImmo, agence-minett and
// immo-centre CSV, capital-realty and oesling-homes JSON. Coordinates are real points
// (data/localities.csv, data/communes.csv) moved by hand: 0.0001 degree of latitude is
// about 11 m, of longitude about 7 m.
//
// Every case is decidable by a careful reader who knows the agencies' habits; none relies
// on the title. Where the evidence is thin (no coordinates on either side), the comment
// says what decides.

type Source = 'wohnen-lux' | 'mosel-wohnen' | 'agence-minett' | 'immo-centre' | 'capital-realty' | 'oesling-homes';

export interface HandListing {
  source: Source;
  // The property: `${case id}:${letter}`.
  property: string;
  record: AgencyRecord;
}

export interface HandCase {
  id: string;
  comment: string;
  listings: HandListing[];
}

const DATE = new Date('2026-11-12T09:30:00.000Z');

function l(source: Source, property: string, r: Omit<AgencyRecord, 'images' | 'students' | 'date'> & Partial<Pick<AgencyRecord, 'images' | 'students' | 'date'>>): HandListing {
  return {
    source,
    property,
    record: {
      images: [`https://img.${source}.example/${encodeURIComponent(r.ref)}/1.jpg`, `https://img.${source}.example/${encodeURIComponent(r.ref)}/2.jpg`],
      students: null,
      date: DATE,
      ...r,
    },
  };
}

export const HAND_CASES: HandCase[] = [
  // ------------------------------------------------------------------ the same property
  {
    id: 'H01',
    comment: 'Baseline: the same flat in Strassen from two agencies that both give the exact habitable area and the building point.',
    listings: [
      l('capital-realty', 'H01:A', {
        ref: 'CR-H01', type: 'RENT', kind: 'flat', title: { en: 'Bright 2-bedroom flat, Strassen', fr: 'Appartement 2 chambres à Strassen' },
        price: 2100, area: 82.4, bedrooms: 2, town: 'Strassen', postcode: 'L-8041', street: 'Route d\'Arlon', lat: 49.62021, lng: 6.07344,
      }),
      l('immo-centre', 'H01:A', {
        ref: 'IC/H/01', type: 'RENT', kind: 'flat', title: 'Bel appartement rénové', price: 2100, priceText: '2100,00', area: 82.4, areaText: '82,4 m²',
        bedrooms: 2, town: 'Strassen', postcode: '8041', lat: 49.62029, lng: 6.07351,
      }),
    ],
  },
  {
    id: 'H02',
    comment:
      'One flat in Bertrange: mosel-wohnen rounds the area to 5 m2 (75 for 73.6) and gives the warm rent (+3 %); capital-realty is exact. ' +
      'Both geocode to the street, about 200 m apart on opposite sides of the building.',
    listings: [
      l('mosel-wohnen', 'H02:A', {
        ref: 'MW-H02', type: 'RENT', kind: 'flat', title: 'Schöne 3-Zimmer-Wohnung in Bertrange', price: 1910, warmRent: true, area: 75, areaText: '75',
        rooms: 3, town: 'Bertrange', postcode: '8080', lat: 49.60962, lng: 6.05208,
      }),
      l('capital-realty', 'H02:A', {
        ref: 'CR-H02', type: 'RENT', kind: 'flat', title: { en: 'Two-bedroom flat near Belle Etoile' }, price: 1850, area: 73.6, bedrooms: 2,
        town: 'Bertrange', postcode: 'L-8080', lat: 49.60801, lng: 6.05083,
      }),
    ],
  },
  {
    id: 'H03',
    comment:
      'The same flat in Differdange relisted with a new price by another agency: 1,890 at agence-minett (the old price), 1,795 at ' +
      'oesling-homes (-5 %). Same rooms, area 62 (rounded) vs 62.4; building point on one side, none on the other.',
    listings: [
      l('agence-minett', 'H03:A', {
        ref: 'AM-H03', type: 'RENT', kind: 'flat', title: 'Appartement 1 chambre avec balcon', price: 1890, priceText: '1 890 €', area: 62,
        areaText: '62', roomsText: '', bedrooms: 1, town: 'Differdange', postcode: 'L-4601', lat: 49.52391, lng: 5.89011,
      }),
      l('oesling-homes', 'H03:A', {
        ref: 'AH-H03', type: 'RENT', kind: 'flat', title: { fr: 'Appartement à Differdange, prix en baisse' }, price: 1795, area: 62.4,
        bedrooms: 1, town: 'DIFFERDANGE', postcode: null, lat: null, lng: null,
      }),
    ],
  },
  {
    id: 'H04',
    comment:
      'A studio in Esch at 19 vs 20 m2: immo-centre gives the habitable 19 m2, wohnen-lux the "surface utile" 20 m2; 950 vs 950. ' +
      'Building point on both, 12 m apart.',
    listings: [
      l('immo-centre', 'H04:A', {
        ref: 'IC/H/04', type: 'RENT', kind: 'studio', title: 'Studio meublé proche Université', price: 950, priceText: '950', area: 19, areaText: '19 m²',
        bedrooms: 0, town: 'Esch-Belval', postcode: '4365', lat: 49.50142, lng: 5.94736, students: true,
      }),
      l('wohnen-lux', 'H04:A', {
        ref: 'WL-H04', type: 'RENT', kind: 'studio', title: 'Möbliertes Studio in Belval', price: 950, area: 20, areaText: '20.00', rooms: 1,
        town: 'Esch-sur-Alzette', quarter: 'Belval', postcode: 'L-4365', lat: 49.50151, lng: 5.94742, students: true,
      }),
    ],
  },
  {
    id: 'H05',
    comment:
      'Building point on one side, the commune centroid of Luxembourg on the other (oesling-homes geocodes by commune and writes the ' +
      'commune only). The flat is in Limpertsberg, 1.2 km from the centroid. Exact figures on both sides.',
    listings: [
      l('immo-centre', 'H05:A', {
        ref: 'IC/H/05', type: 'RENT', kind: 'flat', title: 'Appartement 2 chambres Limpertsberg', price: 2650, priceText: '2.650', area: 88.5,
        areaText: '88,5', bedrooms: 2, town: 'Limpertsberg', postcode: '2430', lat: 49.62268, lng: 6.11852,
      }),
      l('oesling-homes', 'H05:A', {
        ref: 'AH-H05', type: 'RENT', kind: 'flat', title: 'Two-bedroom flat in Luxembourg', price: 2650, area: 88.5, bedrooms: 2,
        town: 'LUXEMBOURG', postcode: null, lat: 49.61357, lng: 6.12644,
      }),
    ],
  },
  {
    id: 'H06',
    comment: 'No area on one side (immo-centre leaves it out); same rooms, same price, building and street points 110 m apart, same quarter.',
    listings: [
      l('immo-centre', 'H06:A', {
        ref: 'IC/H/06', type: 'RENT', kind: 'flat', title: 'Appartement 1 chambre, Bonnevoie', price: 1450, priceText: '1450,00', area: null, areaText: '',
        bedrooms: 1, town: 'Bonnevoie', postcode: '1260', lat: 49.60071, lng: 6.14362,
      }),
      l('capital-realty', 'H06:A', {
        ref: 'CR-H06', type: 'RENT', kind: 'flat', title: { en: 'One-bedroom flat, Bonnevoie', fr: 'Appartement 1 chambre' }, price: 1450, area: 48.3,
        bedrooms: 1, town: 'Luxembourg', quarter: 'Bonnevoie', townIsCommune: true, postcode: 'L-1260', lat: 49.59998, lng: 6.14271,
      }),
    ],
  },
  {
    id: 'H07',
    comment:
      'Luxembourg City, on the Gare / Hollerich border (rue de Hollerich): one agency calls it Gare, the other Hollerich. Building points ' +
      '10 m apart; 71 vs 71.4 m2 (whole-m2 rounding), 1,980 vs 1,990 (rounded to 10).',
    listings: [
      l('agence-minett', 'H07:A', {
        ref: 'AM-H07', type: 'RENT', kind: 'flat', title: 'Appartement 2 chambres, quartier Gare', price: 1990, priceText: '1 990 €', area: 71,
        areaText: '71 m²', roomsText: '', bedrooms: 2, town: 'Luxembourg-Gare', postcode: 'L-1746', lat: 49.59852, lng: 6.12178,
      }),
      l('capital-realty', 'H07:A', {
        ref: 'CR-H07', type: 'RENT', kind: 'flat', title: { en: 'Two-bedroom flat in Hollerich' }, price: 1980, area: 71.4, bedrooms: 2,
        town: 'Hollerich', postcode: 'L-1746', lat: 49.59843, lng: 6.12169,
      }),
    ],
  },
  {
    id: 'H08',
    comment:
      'A house for sale in Noerdange (commune of Beckerich): wohnen-lux gives the locality and the building point, oesling-homes the ' +
      'commune only and its centroid (2.6 km away). 165 m2 vs 165.0, 5 rooms, 895,000 vs 895,000.',
    listings: [
      l('wohnen-lux', 'H08:A', {
        ref: 'WL-H08', type: 'SALE', kind: 'house', title: 'Einfamilienhaus mit Garten in Noerdange', price: 895000, area: 165, rooms: 5,
        town: 'Beckerich', quarter: 'Noerdange', postcode: '8706', lat: 49.74233, lng: 5.92377,
      }),
      l('oesling-homes', 'H08:A', {
        ref: 'AH-H08', type: 'SALE', kind: 'house', title: { fr: 'Maison 4 chambres avec jardin' }, price: 895000, area: 165, bedrooms: 4,
        town: 'Beckerich', postcode: null, lat: 49.73117, lng: 5.89151,
      }),
    ],
  },
  {
    id: 'H09',
    comment:
      'One flat in Kirchberg from three agencies: wohnen-lux writes 2.5 rooms (read as 2) and the surface utile (+3 %), mosel-wohnen ' +
      'rounds the area to 5 and adds charges, capital-realty is exact. All three must end in one group.',
    listings: [
      l('wohnen-lux', 'H09:A', {
        ref: 'WL-H09', type: 'RENT', kind: 'flat', title: 'Moderne Wohnung am Kirchberg', price: 2400, area: 82.4, roomsText: '2.5',
        town: 'Luxemburg', quarter: 'Kirchberg', postcode: 'L-1855', lat: 49.62811, lng: 6.15402,
      }),
      l('mosel-wohnen', 'H09:A', {
        ref: 'MW-H09', type: 'RENT', kind: 'flat', title: 'Appartement moderne Kirchberg', price: 2470, warmRent: true, area: 80, areaText: '80', rooms: 3,
        town: 'Kirchberg', postcode: '1855', lat: 49.62745, lng: 6.15511,
      }),
      l('capital-realty', 'H09:A', {
        ref: 'CR-H09', type: 'RENT', kind: 'flat', title: { en: 'Modern 2-bed flat, Kirchberg' }, price: 2400, area: 80, bedrooms: 2,
        town: 'Kirchberg', postcode: 'L-1855', lat: 49.62902, lng: 6.15297,
      }),
    ],
  },
  {
    id: 'H10',
    comment: 'A sale in Dudelange: 689,000 at agence-minett, 690,000 at oesling-homes (rounds sales to 5,000). Street point vs commune centroid.',
    listings: [
      l('agence-minett', 'H10:A', {
        ref: 'AM-H10', type: 'SALE', kind: 'flat', title: 'Appartement 2 chambres à vendre', price: 689000, priceText: '689.000 €', area: 84,
        areaText: '84', roomsText: '', bedrooms: 2, town: 'DUDELANGE', postcode: 'L-3511', lat: 49.48012, lng: 6.08433,
      }),
      l('oesling-homes', 'H10:A', {
        ref: 'AH-H10', type: 'SALE', kind: 'flat', title: 'Flat for sale in Dudelange', price: 690000, area: 84.2, bedrooms: 2, town: 'Dudelange',
        postcode: '3511', lat: 49.4824, lng: 6.08881,
      }),
    ],
  },
  {
    id: 'H11',
    comment:
      'A flat in Belvaux that immo-centre files under the neighbouring locality Soleuvre (same commune, Sanem). Building points 8 m apart; ' +
      'exact figures.',
    listings: [
      l('immo-centre', 'H11:A', {
        ref: 'IC/H/11', type: 'RENT', kind: 'flat', title: 'Appartement avec terrasse', price: 1620, priceText: '1620', area: 68.9, areaText: '68,9 m²',
        bedrooms: 2, town: 'Soleuvre', postcode: '4411', lat: 49.51402, lng: 5.93319,
      }),
      l('capital-realty', 'H11:A', {
        ref: 'CR-H11', type: 'RENT', kind: 'flat', title: { en: 'Flat with terrace in Belvaux' }, price: 1620, area: 68.9, bedrooms: 2, town: 'Belvaux',
        postcode: 'L-4411', lat: 49.51408, lng: 5.93325,
      }),
    ],
  },
  {
    id: 'H12',
    comment:
      'A flat in Howald (commune of Hesperange) that one agency advertises as "Luxembourg-Gasperich": the text resolves to another ' +
      'commune. Building points on both, 9 m apart; exact figures.',
    listings: [
      l('agence-minett', 'H12:A', {
        ref: 'AM-H12', type: 'RENT', kind: 'flat', title: 'Appartement proche Cloche d\'Or', price: 2250, priceText: '2 250 €', area: 90, areaText: '90',
        roomsText: '', bedrooms: 2, town: 'Luxembourg-Gasperich', postcode: 'L-1899', lat: 49.58163, lng: 6.13912,
      }),
      l('wohnen-lux', 'H12:A', {
        ref: 'WL-H12', type: 'RENT', kind: 'flat', title: 'Wohnung nahe Cloche d\'Or', price: 2250, area: 90.4, rooms: 3, town: 'Hesperange',
        quarter: 'Howald', postcode: 'L-1899', lat: 49.58171, lng: 6.13918,
      }),
    ],
  },
  {
    id: 'H13',
    comment: 'A sublet priced by the week at oesling-homes (460 a week: 1,993 a month) and by the month at capital-realty (2,000).',
    listings: [
      l('oesling-homes', 'H13:A', {
        ref: 'AH-H13', type: 'SUBLET', kind: 'flat', title: { en: 'Furnished sublet, 6 months' }, price: 460, weekly: true, area: 52, bedrooms: 1,
        town: 'Luxembourg', postcode: null, lat: 49.61357, lng: 6.12644,
      }),
      l('capital-realty', 'H13:A', {
        ref: 'CR-H13', type: 'SUBLET', kind: 'flat', title: { en: 'Sublet: furnished 1-bed in Belair' }, price: 2000, area: 52, bedrooms: 1,
        town: 'Belair', postcode: 'L-2132', lat: 49.61123, lng: 6.10721,
      }),
    ],
  },
  {
    id: 'H14',
    comment:
      'No coordinates on either side: the same flat in Mersch from agence-minett (67 m2 whole, 1 bedroom, 1,540) and mosel-wohnen (65, its ' +
      '5 m2 rounding; 2 rooms; 1,590 warm, +3.2 %). Same commune, same rooms; the differences are exactly these two agencies\' habits.',
    listings: [
      l('agence-minett', 'H14:A', {
        ref: 'AM-H14', type: 'RENT', kind: 'flat', title: 'Appartement 1 chambre Mersch centre', price: 1540, priceText: '1540', area: 67, areaText: '67',
        roomsText: '', bedrooms: 1, town: 'Mersch', postcode: 'L-7520', lat: null, lng: null,
      }),
      l('mosel-wohnen', 'H14:A', {
        ref: 'MW-H14', type: 'RENT', kind: 'flat', title: '2-Zimmer-Wohnung in Mersch', price: 1590, warmRent: true, area: 65, areaText: '65', rooms: 2,
        town: 'MERSCH', postcode: null, lat: null, lng: null,
      }),
    ],
  },
  {
    id: 'H15',
    comment: 'A room in a flatshare in Esch (OpenImmo "zimmer" vs CSV Colocation): 14 m2, 750 vs 760.',
    listings: [
      l('wohnen-lux', 'H15:A', {
        ref: 'WL-H15', type: 'FLATSHARE', kind: 'room', title: 'WG-Zimmer nahe Bahnhof Esch', price: 750, area: 14, rooms: 1, town: 'Esch-sur-Alzette',
        postcode: 'L-4010', lat: 49.49811, lng: 5.98093, students: true,
      }),
      l('agence-minett', 'H15:A', {
        ref: 'AM-H15', type: 'FLATSHARE', kind: 'room', title: 'Chambre en colocation, gare d\'Esch', price: 760, priceText: '760 €', area: 14, areaText: '14',
        roomsText: '1', bedrooms: 1, town: 'ESCH/ALZETTE', postcode: null, lat: 49.4982, lng: 5.98071, students: true,
      }),
    ],
  },
  {
    id: 'H16',
    comment:
      'A house for sale in Junglinster, "surface utile" 187.2 (+4 %) at wohnen-lux vs 180 habitable at immo-centre; same price; building ' +
      'point vs commune centroid (1.1 km).',
    listings: [
      l('wohnen-lux', 'H16:A', {
        ref: 'WL-H16', type: 'SALE', kind: 'house', title: 'Freistehendes Haus in Junglinster', price: 1150000, area: 187.2, rooms: 5,
        town: 'Junglinster', postcode: 'L-6101', lat: 49.71951, lng: 6.24802,
      }),
      l('immo-centre', 'H16:A', {
        ref: 'IC/H/16', type: 'SALE', kind: 'house', title: 'Maison individuelle 4 chambres', price: 1150000, priceText: '€ 1 150 000', area: 180,
        areaText: '180 m²', bedrooms: 4, town: 'Junglinster', postcode: '6101', lat: 49.71207, lng: 6.25347,
      }),
    ],
  },
  {
    id: 'H17',
    comment: 'A studio in Esch, both sides at the commune centroid, the town written "Esch/Alzette" and "Esch-Uelzecht"; identical figures.',
    listings: [
      l('agence-minett', 'H17:A', {
        ref: 'AM-H17', type: 'RENT', kind: 'studio', title: 'Studio au centre d\'Esch', price: 1050, priceText: '1 050 €', area: 31, areaText: '31',
        roomsText: '', bedrooms: 0, town: 'Esch/Alzette', postcode: null, lat: 49.49309, lng: 5.97889,
      }),
      l('oesling-homes', 'H17:A', {
        ref: 'AH-H17', type: 'RENT', kind: 'studio', title: { de: 'Studio im Zentrum von Esch' }, price: 1050, area: 31, bedrooms: 0,
        town: 'Esch-Uelzecht', postcode: null, lat: 49.49309, lng: 5.97889,
      }),
    ],
  },
  {
    id: 'H18',
    comment:
      'Postcode and commune only, no coordinates (oesling-homes) vs the quarter and the building point (wohnen-lux); the flat is in ' +
      'Bonnevoie-Sud. Figures exact on both sides.',
    listings: [
      l('oesling-homes', 'H18:A', {
        ref: 'AH-H18', type: 'RENT', kind: 'flat', title: { fr: 'Appartement 3 chambres' }, price: 2300, area: 96.3, bedrooms: 3, town: 'Luxembourg',
        postcode: '1731', lat: null, lng: null,
      }),
      l('wohnen-lux', 'H18:A', {
        ref: 'WL-H18', type: 'RENT', kind: 'flat', title: 'Familienwohnung in Bonneweg', price: 2300, area: 96.3, rooms: 4, town: 'Luxembourg',
        quarter: 'Bonnevoie-Sud', postcode: 'L-1731', lat: 49.59581, lng: 6.14702,
      }),
    ],
  },
  {
    id: 'H19',
    comment: 'Rooms left out on one side (mosel-wohnen), the area rounded to 5 (55 for 56.3); street points 130 m apart in Walferdange.',
    listings: [
      l('mosel-wohnen', 'H19:A', {
        ref: 'MW-H19', type: 'RENT', kind: 'flat', title: 'Wohnung in Walferdingen', price: 1700, warmRent: true, area: 55, areaText: '55', rooms: null,
        town: 'Walferdange', postcode: '7201', lat: 49.66002, lng: 6.13452,
      }),
      l('immo-centre', 'H19:A', {
        ref: 'IC/H/19', type: 'RENT', kind: 'flat', title: 'Appartement 1 chambre Walferdange', price: 1650, priceText: '1650,00', area: 56.3,
        areaText: '56,3 m²', bedrooms: 1, town: 'Walferdange', postcode: null, lat: 49.65891, lng: 6.13389,
      }),
    ],
  },
  // ------------------------------------------------------------- different properties
  {
    id: 'H20',
    comment:
      'Twin flats in one building in Hesperange (same building point, 3 rooms), 84.2 vs 86.9 m2, 2,350 vs 2,450 (+4.3 %), two agencies ' +
      'that both give exact areas. Two properties.',
    listings: [
      l('immo-centre', 'H20:A', {
        ref: 'IC/H/20', type: 'RENT', kind: 'flat', title: 'Appartement 2 chambres, 1er étage', price: 2350, priceText: '2350', area: 84.2, areaText: '84,2',
        bedrooms: 2, town: 'Hesperange', postcode: '5850', lat: 49.57011, lng: 6.15842,
      }),
      l('capital-realty', 'H20:B', {
        ref: 'CR-H20', type: 'RENT', kind: 'flat', title: { en: 'Two-bedroom flat, 2nd floor' }, price: 2450, area: 86.9, bedrooms: 2, town: 'Hesperange',
        postcode: 'L-5850', lat: 49.57011, lng: 6.15842,
      }),
    ],
  },
  {
    id: 'H21',
    comment: 'Identical new-build flats on two floors in Mamer: same area (92.4) and rooms, same building point, 1,020,000 vs 1,065,000 (+4.4 %).',
    listings: [
      l('capital-realty', 'H21:A', {
        ref: 'CR-H21', type: 'SALE', kind: 'flat', title: { en: 'New build: 2-bed flat, 1st floor' }, price: 1020000, area: 92.4, bedrooms: 2,
        town: 'Mamer', postcode: 'L-8211', lat: 49.62741, lng: 6.02282,
      }),
      l('immo-centre', 'H21:B', {
        ref: 'IC/H/21', type: 'SALE', kind: 'flat', title: 'VEFA: appartement 2 chambres, 3e étage', price: 1065000, priceText: '€ 1 065 000', area: 92.4,
        areaText: '92,4 m²', bedrooms: 2, town: 'Mamer', postcode: '8211', lat: 49.62741, lng: 6.02282,
      }),
    ],
  },
  {
    id: 'H22',
    comment: 'One agency lists two flats of one new building with identical figures: one source never merges with itself.',
    listings: [
      l('agence-minett', 'H22:A', {
        ref: 'AM-H22-1', type: 'RENT', kind: 'flat', title: 'Appartement neuf 1 chambre (lot 3)', price: 1480, priceText: '1 480 €', area: 55, areaText: '55',
        roomsText: '', bedrooms: 1, town: 'Pétange', postcode: 'L-4740', lat: 49.55812, lng: 5.87911,
      }),
      l('agence-minett', 'H22:B', {
        ref: 'AM-H22-2', type: 'RENT', kind: 'flat', title: 'Appartement neuf 1 chambre (lot 7)', price: 1480, priceText: '1 480 €', area: 55, areaText: '55',
        roomsText: '', bedrooms: 1, town: 'Pétange', postcode: 'L-4740', lat: 49.55812, lng: 5.87911,
      }),
    ],
  },
  {
    id: 'H23',
    comment:
      'Two studios in one building in Luxembourg-Gare: A (19 m2, 890) is listed by immo-centre and capital-realty with exact figures; ' +
      'B (20.5 m2 habitable, 21.1 utile at wohnen-lux, 950: +6.7 %) by wohnen-lux only. A\'s two listings are one group; B stays apart.',
    listings: [
      l('immo-centre', 'H23:A', {
        ref: 'IC/H/23', type: 'RENT', kind: 'studio', title: 'Studio 19 m², quartier Gare', price: 890, priceText: '890', area: 19, areaText: '19 m²',
        bedrooms: 0, town: 'Gare', postcode: '1611', lat: 49.60051, lng: 6.13281,
      }),
      l('capital-realty', 'H23:A', {
        ref: 'CR-H23', type: 'RENT', kind: 'studio', title: { en: 'Compact studio near the station' }, price: 890, area: 19, bedrooms: 0,
        town: 'Luxembourg', quarter: 'Gare', townIsCommune: true, postcode: 'L-1611', lat: 49.60139, lng: 6.13392,
      }),
      l('wohnen-lux', 'H23:B', {
        ref: 'WL-H23', type: 'RENT', kind: 'studio', title: 'Studio am Bahnhof', price: 950, area: 21.1, rooms: 1, town: 'Luxembourg', quarter: 'Gare',
        postcode: 'L-1611', lat: 49.60058, lng: 6.13289,
      }),
    ],
  },
  {
    id: 'H24',
    comment:
      'Two different houses in the village of Oetrange (Contern) with the same figures (160 m2, 5 rooms, 1,250,000), building points ' +
      '350 m apart.',
    listings: [
      l('wohnen-lux', 'H24:A', {
        ref: 'WL-H24', type: 'SALE', kind: 'house', title: 'Haus mit Garten in Oetringen', price: 1250000, area: 160, rooms: 5, town: 'Contern',
        quarter: 'Oetrange', postcode: 'L-5324', lat: 49.59912, lng: 6.25801,
      }),
      l('capital-realty', 'H24:B', {
        ref: 'CR-H24', type: 'SALE', kind: 'house', title: { en: 'Family house in Oetrange' }, price: 1250000, area: 160, bedrooms: 4, town: 'Oetrange',
        postcode: 'L-5324', lat: 49.60178, lng: 6.26092,
      }),
    ],
  },
  {
    id: 'H25',
    comment: 'Look-alike flats in Belair, 500 m apart: 78 vs 79.5 m2, 2,150 vs 2,180, same rooms, building points on both.',
    listings: [
      l('immo-centre', 'H25:A', {
        ref: 'IC/H/25', type: 'RENT', kind: 'flat', title: 'Appartement 2 chambres Belair', price: 2150, priceText: '2150', area: 78, areaText: '78',
        bedrooms: 2, town: 'Belair', postcode: '2132', lat: 49.61149, lng: 6.10683,
      }),
      l('capital-realty', 'H25:B', {
        ref: 'CR-H25', type: 'RENT', kind: 'flat', title: { en: 'Two-bedroom flat, Belair' }, price: 2180, area: 79.5, bedrooms: 2, town: 'Belair',
        postcode: 'L-2132', lat: 49.61412, lng: 6.1013,
      }),
    ],
  },
  {
    id: 'H26',
    comment: 'One building in Ettelbruck: a 1-bedroom flat (52 m2, 1,600) and a 2-bedroom flat (55 m2, 1,650). Rooms differ: two properties.',
    listings: [
      l('oesling-homes', 'H26:A', {
        ref: 'AH-H26', type: 'RENT', kind: 'flat', title: { fr: 'Appartement 1 chambre Ettelbruck' }, price: 1600, area: 52, bedrooms: 1,
        town: 'Ettelbruck', postcode: '9010', lat: 49.84701, lng: 6.10122,
      }),
      l('agence-minett', 'H26:B', {
        ref: 'AM-H26', type: 'RENT', kind: 'flat', title: 'Appartement 2 chambres Ettelbruck', price: 1650, priceText: '1 650 €', area: 55, areaText: '55',
        roomsText: '', bedrooms: 2, town: 'Ettelbruck', postcode: 'L-9010', lat: 49.84703, lng: 6.10125,
      }),
    ],
  },
  {
    id: 'H27',
    comment: 'The same flat offered for rent by one agency and for sale by another: two offers, never one listing.',
    listings: [
      l('capital-realty', 'H27:A', {
        ref: 'CR-H27', type: 'RENT', kind: 'flat', title: { en: 'Two-bedroom flat in Limpertsberg' }, price: 2500, area: 85, bedrooms: 2,
        town: 'Limpertsberg', postcode: 'L-2430', lat: 49.62301, lng: 6.12011,
      }),
      l('immo-centre', 'H27:B', {
        ref: 'IC/H/27', type: 'SALE', kind: 'flat', title: 'Appartement 2 chambres à vendre', price: 985000, priceText: '€ 985 000', area: 85, areaText: '85',
        bedrooms: 2, town: 'Limpertsberg', postcode: '2430', lat: 49.62301, lng: 6.12011,
      }),
    ],
  },
  {
    id: 'H28',
    comment:
      'The centroid trap: two different flats in Luxembourg both geocoded to the commune centroid (distance 0) and written "Luxembourg": ' +
      '64 vs 70.5 m2, 1,850 vs 1,990, by agencies that give exact areas.',
    listings: [
      l('oesling-homes', 'H28:A', {
        ref: 'AH-H28', type: 'RENT', kind: 'flat', title: 'One-bedroom flat, Luxembourg', price: 1850, area: 64, bedrooms: 1, town: 'Luxembourg',
        postcode: null, lat: 49.61357, lng: 6.12644,
      }),
      l('immo-centre', 'H28:B', {
        ref: 'IC/H/28', type: 'RENT', kind: 'flat', title: 'Appartement 1 chambre Luxembourg', price: 1990, priceText: '1990', area: 70.5, areaText: '70,5',
        bedrooms: 1, town: 'Luxembourg', postcode: null, lat: 49.61357, lng: 6.12644,
      }),
    ],
  },
  {
    id: 'H29',
    comment:
      'Siblings in one building in Bonnevoie, one without coordinates: 61 m2 at 1,690 (immo-centre, building point) and 65 m2 at 1,760 ' +
      '(capital-realty, none); both agencies give exact areas and prices.',
    listings: [
      l('immo-centre', 'H29:A', {
        ref: 'IC/H/29', type: 'RENT', kind: 'flat', title: 'Appartement 1 chambre Bonnevoie', price: 1690, priceText: '1690,00', area: 61, areaText: '61 m²',
        bedrooms: 1, town: 'Bonnevoie', postcode: '1264', lat: 49.59742, lng: 6.14588,
      }),
      l('capital-realty', 'H29:B', {
        ref: 'CR-H29', type: 'RENT', kind: 'flat', title: { en: 'Bright 1-bed in Bonnevoie' }, price: 1760, area: 65, bedrooms: 1, town: 'Bonnevoie',
        postcode: 'L-1264', lat: null, lng: null,
      }),
    ],
  },
  {
    id: 'H30',
    comment:
      'A flat listed by two agencies (A: 95 m2, 2,600, exact on both) and its neighbour in the same building listed by a third (B: 89 m2, ' +
      '2,450, -5.8 %). A\'s two listings are one group; B stays apart.',
    listings: [
      l('agence-minett', 'H30:A', {
        ref: 'AM-H30', type: 'RENT', kind: 'flat', title: 'Grand appartement 2 chambres', price: 2600, priceText: '2 600 €', area: 95, areaText: '95',
        roomsText: '', bedrooms: 2, town: 'Bertrange', postcode: 'L-8069', lat: 49.60409, lng: 6.04652,
      }),
      l('oesling-homes', 'H30:A', {
        ref: 'AH-H30', type: 'RENT', kind: 'flat', title: { en: 'Large two-bedroom flat' }, price: 2600, area: 95, bedrooms: 2, town: 'Bertrange',
        postcode: '8069', lat: 49.60126, lng: 6.04104,
      }),
      l('immo-centre', 'H30:B', {
        ref: 'IC/H/30', type: 'RENT', kind: 'flat', title: 'Appartement 2 chambres', price: 2450, priceText: '2450', area: 89, areaText: '89',
        bedrooms: 2, town: 'Bertrange', postcode: '8069', lat: 49.60414, lng: 6.04659,
      }),
    ],
  },
  {
    id: 'H31',
    comment:
      'Two different studios at 19 and 20 m2 in one building in Esch, 880 vs 940 (+6.8 %), from two agencies that give exact figures and ' +
      'building points.',
    listings: [
      l('immo-centre', 'H31:A', {
        ref: 'IC/H/31', type: 'RENT', kind: 'studio', title: 'Studio rénové', price: 880, priceText: '880', area: 19, areaText: '19',
        bedrooms: 0, town: 'Esch-sur-Alzette', postcode: '4011', lat: 49.49612, lng: 5.98014,
      }),
      l('capital-realty', 'H31:B', {
        ref: 'CR-H31', type: 'RENT', kind: 'studio', title: { en: 'Renovated studio, Esch centre' }, price: 940, area: 20, bedrooms: 0,
        town: 'Esch-sur-Alzette', postcode: 'L-4011', lat: 49.49614, lng: 5.98011,
      }),
    ],
  },
];

const FORMAT: Record<Source, 'openimmo' | 'csv' | 'json'> = {
  'wohnen-lux': 'openimmo',
  'mosel-wohnen': 'openimmo',
  'agence-minett': 'csv',
  'immo-centre': 'csv',
  'capital-realty': 'json',
  'oesling-homes': 'json',
};

export function handSet(): { feeds: FeedFile[]; truth: Map<string, string>; caseOf: Map<string, HandCase> } {
  const bySource = new Map<Source, AgencyRecord[]>();
  const truth = new Map<string, string>();
  const caseOf = new Map<string, HandCase>();
  for (const c of HAND_CASES) {
    for (const x of c.listings) {
      bySource.set(x.source, [...(bySource.get(x.source) ?? []), x.record]);
      truth.set(`${x.source}\u0000${x.record.ref}`, x.property);
      caseOf.set(x.property, c);
    }
  }
  const feeds: FeedFile[] = [...bySource].map(([source, recs]) => {
    const format = FORMAT[source];
    const text =
      format === 'openimmo'
        ? writeOpenImmo(recs, { firma: source, anbieternr: 'HAND' })
        : format === 'csv'
          ? writeCsv(recs, { coordComma: source === 'agence-minett' })
          : writeJson(recs, { agency: source, generatedAt: new Date('2026-11-22T06:00:00.000Z') });
    return { source, format, fileName: `${source}.${format === 'openimmo' ? 'openimmo.xml' : format}`, text, records: recs.length };
  });
  return { feeds, truth, caseOf };
}
