import { describe, expect, it } from 'vitest';
import { nearLuxembourg } from '../../src/ingest/abroad.js';
import { parseCsvFeed } from '../../src/ingest/adapters/index.js';
import { fixCoordinates, resolvePlace, type PlaceInput } from '../../src/ingest/place.js';
import { parseCoordinate } from '../../src/ingest/coordinates.js';
import { accepted, csvFeed, csvRow, gazetteer, normalizeFeed } from './helpers.js';

// Place texts as agencies type them into one field, which name nothing as a whole: read part
// by part (src/ingest/place.ts, fromParts), and short names several communes answer to.
const place = (town: string | null, more: Partial<PlaceInput> = {}) => {
  const r = resolvePlace(gazetteer(), { town, coords: null, ...more });
  return r.ok ? [r.commune, r.locality] : `rejected: ${r.reason}`;
};

describe('a place text in several parts', () => {
  it('a commune with a quarter, in any separator, also one the reference data names otherwise (Lallange is Lalleng)', () => {
    for (const t of ['Esch-sur-Alzette - Lallange', 'Esch-sur-Alzette (Lallange)', 'Lallange', 'Esch/Alzette, Lallange']) {
      expect(place(t), t).toEqual(['Esch-sur-Alzette', 'Lalleng']);
    }
    expect(place('Luxembourg (Bouneweg)')).toEqual(['Luxembourg', null]);
  });

  it('a street and number beside the town: the town', () => {
    expect(place('Rue de Luxembourg 25, 8077 Bertrange')).toEqual(['Bertrange', null]);
    expect(place('Strassen, rue du Kiem 145')).toEqual(['Strassen', null]);
    expect(place("Route d'Arlon 200, Strassen")).toEqual(['Strassen', null]);
  });

  it('parts that name no place are passed over: residences, Luxembourgish streets, descriptions, the country written out', () => {
    for (const [t, commune, locality] of [
      ['Op der Heed, Hesperange', 'Hesperange', null], ['Résidence Les Jardins, Strassen', 'Strassen', null],
      ['Bertrange - Proche centre', 'Bertrange', null], ['Strassen (proche Luxembourg)', 'Strassen', null],
      ['Strassen, Grand-Duché', 'Strassen', null], ['Dudelange, Luxembourg, Europe', 'Dudelange', null],
      ["Sentier de l'Espérance, Luxembourg-Limpertsberg", 'Luxembourg', 'Limpertsberg'], ['Bettembourg, proche frontière', 'Bettembourg', null],
      // Streets named after towns abroad are streets.
      ['Route de Thionville 12, Luxembourg', 'Luxembourg', null], ["Route d'Arlon 200, Strassen", 'Strassen', null],
    ] as const) {
      expect(place(t), t).toEqual([commune, locality]);
    }
  });

  it('two quarters of one commune: the commune, no quarter', () => {
    expect(place('Luxembourg - Cents/Hamm')).toEqual(['Luxembourg', null]);
    expect(place('Luxembourg-Hollerich/Gare')).toEqual(['Luxembourg', null]);
    expect(place('Kirchberg/Weimershof')).toEqual(['Luxembourg', null]);
  });

  it('the country after a street is the City only when nothing else places the record', () => {
    expect(place("Route d'Esch, Luxembourg")).toEqual(['Luxembourg', null]);
    // Coordinates in Esch-sur-Alzette decide instead of the country's name.
    const r = resolvePlace(gazetteer(), { town: "Route d'Esch, Luxembourg", coords: { lat: 49.4958, lng: 5.9806 } });
    expect(r.ok && [r.commune, r.by]).toEqual(['Esch-sur-Alzette', 'coordinates']);
  });

  it("a town abroad beside a Luxembourg name, or the country's name: rejected, not placed in Luxembourg", () => {
    for (const t of [
      'Arlon, Luxembourg', 'Bastogne, Luxembourg', 'Thionville, Luxembourg', 'Trier, Luxemburg', 'Arlon / Steinfort', 'Arlon (Steinfort)',
      'Audun-le-Tiche / Esch-sur-Alzette', 'Villerupt, Esch-sur-Alzette', 'Trier (Wasserbillig)', 'Rodange / Athus', 'Apach - Schengen',
      'Nennig - Remich', 'Longwy - Frontière', 'Thionville, proche Luxembourg', 'B-6700 Arlon, Luxembourg', 'Messancy, Luxembourg (Belgique)',
    ]) {
      // The reason names the place abroad (a probe: "unknown commune or locality" for
      // "Arlon / Steinfort" told the operator that Steinfort was unknown).
      expect(place(t), t).toMatch(/^rejected: ".+" names a place abroad \(".+"\): the record may not be in Luxembourg; give the commune alone$/);
    }
    expect(place('Arlon / Steinfort')).toBe('rejected: "Arlon / Steinfort" names a place abroad ("Arlon"): the record may not be in Luxembourg; give the commune alone');
    // A postcode outside the City settles against the country's name.
    expect(place('Rue de Luxembourg, Luxembourg', { postcode: 'L-8077' })).toMatch(/^rejected/);
  });

  // An outside probe: "Luxembourg" with L-4410 (Belvaux's) or L-9530 (Wiltz's), in a place field,
  // written twice or with the postcode in the text, was the City, the postcode dropped as a slip.
  it("the country's name alone with a postcode outside the City: not the City; coordinates decide, else rejected", () => {
    for (const [town, postcode] of [['Luxembourg', 'L-4410'], ['Luxembourg', '9530'], ['Luxembourg, Luxembourg', 'L-4410'], ['L-4410 Luxembourg', null], ['Luxemburg', '4410'], ['Grand-Duché de Luxembourg', 'L-4410']] as const) {
      expect(place(town, { postcode }), `${town} ${postcode}`).toMatch(/^rejected: ".+" names the country, and the postcode (4410|9530) alone does not say which commune/);
    }
    const belvaux = resolvePlace(gazetteer(), { town: 'Luxembourg', postcode: 'L-4410', coords: { lat: 49.5126, lng: 5.9342 } });
    expect(belvaux.ok && [belvaux.commune, belvaux.by, belvaux.postcode]).toEqual(['Sanem', 'coordinates', 4410]);
    // The City's postcodes, or none: the City, as before.
    expect(place('Luxembourg', { postcode: 'L-1611' })).toEqual(['Luxembourg', null]);
    expect(place('Luxembourg')).toEqual(['Luxembourg', null]);
    expect(place('Luxembourg-Gare', { postcode: 'L-4410' })).toEqual(['Luxembourg', 'Gare']);
  });

  // An outside probe: with their own coordinates (in Luxembourg's bounding box), records of
  // Arlon, Athus and Longwy were stored in the nearest commune of Luxembourg.
  it('a town abroad is rejected whatever the coordinates, alone or beside a Luxembourg name', () => {
    expect(place('Arlon / Steinfort', { coords: { lat: 49.6833, lng: 5.8167 } })).toMatch(/^rejected: "Arlon \/ Steinfort" names a place abroad \("Arlon"\)/);
    expect(place('Rodange / Athus', { coords: { lat: 49.5667, lng: 5.8333 } })).toMatch(/^rejected: "Rodange \/ Athus" names a place abroad \("Athus"\)/);
    expect(place('Arlon', { coords: { lat: 49.6833, lng: 5.8167 } })).toMatch(/^rejected: "Arlon" names a place abroad/);
    expect(place('Longwy', { coords: { lat: 49.519, lng: 5.766 } })).toMatch(/^rejected: "Longwy" names a place abroad/);
    expect(place('B-6700 Arlon')).toMatch(/^rejected: "B-6700 Arlon" names a place abroad/);
    // A street named after such a town is a street.
    expect(place('Route de Thionville 12, Dudelange')).toEqual(['Dudelange', null]);
  });

  // An outside probe: "Perl" (Perl in Germany, or Perlé's German name) with Perl's coordinates
  // was stored as Perlé, 38 km away; "Luxembourg" with coordinates and a postcode of Wiltz as
  // the City; "Mersch" with coordinates 28 km away kept them.
  it('checks the text against the coordinates: the text decides, but not the country nor a town abroad', () => {
    const at = (town: string, lat: number, lng: number, postcode?: string) => resolvePlace(gazetteer(), { town, postcode, coords: { lat, lng } });
    // Perlé's German name, near Perlé: Perlé; near Perl in Germany: abroad.
    const perle = at('Perl', 49.81, 5.765);
    expect(perle.ok && [perle.commune, perle.coords]).toEqual(['Rambrouch', { lat: 49.81, lng: 5.765 }]);
    expect(at('Perl', 49.4717, 6.3897)).toMatchObject({ ok: false, reason: expect.stringMatching(/names a place abroad \("Perl"\)/) });
    expect(place('Perl')).toEqual(['Rambrouch', 'Perlé']);
    // The country's name is no commune: coordinates elsewhere decide.
    const wiltz = at('Luxembourg', 49.9654, 5.9371, 'L-9530');
    expect(wiltz.ok && [wiltz.commune, wiltz.by, wiltz.postcode, wiltz.coords]).toEqual(['Wiltz', 'coordinates', 9530, { lat: 49.9654, lng: 5.9371 }]);
    const city = at('Luxembourg', 49.6116, 6.1319);
    expect(city.ok && [city.commune, city.coords]).toEqual(['Luxembourg', { lat: 49.6116, lng: 6.1319 }]);
    // A commune named with coordinates far from all of its places: the commune, without them.
    const mersch = at('Mersch', 49.5, 6.0);
    expect(mersch.ok && [mersch.commune, mersch.by, mersch.coords]).toEqual(['Mersch', 'text', null]);
    const merschNear = at('Mersch', 49.7489, 6.1061);
    expect(merschNear.ok && merschNear.coords).toEqual({ lat: 49.7489, lng: 6.1061 });
  });

  // An outside probe: villages across the border, "Rédange" of Lorraine with its own coordinates,
  // "Luxembourg, Luxembourg" (a city field and a country field) with coordinates of Wiltz.
  it('villages across the border, a French Rédange, the country named twice, a shared locality near one of its namesakes', () => {
    for (const t of ['Sterpenich', 'Hussigny-Godbrange', 'Mondorff', 'Wasserbillig / Langsur', 'Temmels', 'Körperich']) expect(place(t), t).toMatch(/names a place abroad/);
    const at = (town: string, lat: number, lng: number) => resolvePlace(gazetteer(), { town, coords: { lat, lng } });
    expect(at('Rédange', 49.4919, 5.9138)).toMatchObject({ ok: false, reason: expect.stringMatching(/names a place abroad \("Rédange"\)/) });
    expect(place('Rédange')).toEqual(['Redange/Attert', null]);
    const wiltz = at('Luxembourg, Luxembourg', 49.9654, 5.9371);
    expect(wiltz.ok && [wiltz.commune, wiltz.coords]).toEqual(['Wiltz', { lat: 49.9654, lng: 5.9371 }]);
    // A locality two communes share, its coordinates 1-3 km from one of them (the nearest commune
    // another): that one (an outside probe: rejected as ambiguous).
    for (const [lat, lng] of [[49.735, 6.325], [49.72, 6.335]]) {
      const e = at('Eschweiler', lat, lng);
      expect(e.ok && [e.commune, e.locality], `${lat},${lng}`).toEqual(['Junglinster', 'Eschweiler']);
    }
    // A commune's name that a locality elsewhere bears too, with coordinates near that locality:
    // the locality (an outside probe: Fischbach near Clervaux's was the commune, 35 km away).
    const f = at('Fischbach', 50.04837, 6.05975);
    expect(f.ok && [f.commune, f.locality, f.coords]).toEqual(['Clervaux', 'Fischbach', { lat: 50.04837, lng: 6.05975 }]);
    // Schengen, Wasserbillig and Steinfort stay in Luxembourg.
    for (const t of ['Schengen', 'Wasserbillig', 'Steinfort', 'Weiswampach']) expect(Array.isArray(place(t)), t).toBe(true);
  });

  // An outside probe (stop 42): with Arlon's, Athus's, Longwy's or Perl's coordinates (all in
  // Luxembourg's bounding box) and no place, only the country, or a village the importer does not
  // know ("Udange", "Rodemack", "Wehr"), records went to the nearest commune of Luxembourg.
  it('coordinates in another country: rejected unless the text names a place of Luxembourg (then they are dropped)', () => {
    const at = (town: string | null, lat: number, lng: number) => resolvePlace(gazetteer(), { town, coords: { lat, lng } });
    for (const [town, lat, lng, country] of [
      [null, 49.6833, 5.8167, 'Belgium'], ['Luxembourg', 49.6833, 5.8167, 'Belgium'], ['Op der Heed', 49.564, 5.836, 'Belgium'], [null, 49.519, 5.766, 'France'],
      [null, 49.472, 6.39, 'Germany'], ['Udange', 49.665, 5.78, 'Belgium'], ['Rodemack', 49.47, 6.23, 'France'], ['Wehr', 49.545, 6.405, 'Germany'],
    ] as const) {
      expect(at(town, lat, lng), `${town} ${lat},${lng}`).toMatchObject({ ok: false, reason: expect.stringMatching(new RegExp(`^the coordinates \\(${lat}, ${lng}\\) lie in ${country}.*: the record may not be in Luxembourg`)) });
    }
    // A place of Luxembourg named: that place, without the coordinates.
    const steinfort = at('Steinfort', 49.6833, 5.8167);
    expect(steinfort.ok && [steinfort.commune, steinfort.by, steinfort.coords]).toEqual(['Steinfort', 'text', null]);
    // A name a town abroad bears too, with that town's coordinates: abroad (Perlé's German name, Perl).
    expect(at('Perl', 49.472, 6.39)).toMatchObject({ ok: false, reason: expect.stringMatching(/names a place abroad \("Perl"\)/) });
    // Every locality of the reference data at its point, and 1.2 km from it in eight directions,
    // with no text: in Luxembourg (the borders are simplified: a margin keeps the villages on the
    // Our and the Moselle in).
    let points = 0;
    for (const c of gazetteer().communes) {
      for (const l of gazetteer().localitiesOf(c.name)) {
        if (l.lat === null || l.lng === null) continue;
        for (let k = 0; k <= 8; k++) {
          const d = k === 0 ? 0 : 1.2;
          const p = { lat: l.lat + (d / 111.2) * Math.cos((k * Math.PI) / 4), lng: l.lng + (d / (111.2 * Math.cos((l.lat * Math.PI) / 180))) * Math.sin((k * Math.PI) / 4) };
          const r = resolvePlace(gazetteer(), { town: null, coords: p });
          expect(r.ok, `${l.locality} (${c.name}) ${p.lat},${p.lng}: ${r.ok ? '' : r.reason}`).toBe(true);
          points++;
        }
      }
    }
    expect(points).toBeGreaterThan(4000);
  });

  // A regression probe (stop 42): "Luxembourg" with Trier's or Thionville's coordinates (outside
  // Luxembourg's box, dropped first) was the City; "Esch" 1.5-4 km from Esch-sur-Sûre, nearer a
  // third commune's point, was Esch-sur-Alzette without its coordinates.
  it('coordinates outside the box but in the countries around are abroad too; a short name takes the namesake nearest its coordinates', () => {
    for (const [lat, lng, country] of [[49.7497, 6.6373, 'Germany'], [49.3579, 6.1683, 'France'], [50.0, 5.72, 'Belgium']] as const) {
      for (const town of ['Luxembourg', null]) {
        expect(resolvePlace(gazetteer(), { town, coords: fixCoordinates(lat, lng), given: nearLuxembourg(lat, lng) }), `${town} ${lat},${lng}`).toMatchObject({
          ok: false,
          reason: expect.stringMatching(new RegExp(`^the coordinates \\(${lat}, ${lng}\\) lie in ${country}`)),
        });
      }
      const named = resolvePlace(gazetteer(), { town: 'Mersch', coords: null, given: nearLuxembourg(lat, lng) });
      expect(named.ok && [named.commune, named.coords]).toEqual(['Mersch', null]);
    }
    // Not coordinates of a place: 0/0, another grid's metres.
    expect(nearLuxembourg(0, 0)).toBeNull();
    expect(nearLuxembourg(77000, 75000)).toBeNull();
    for (const [dLat, dLng] of [[0.0135, 0.021], [0.02, 0.04], [-0.018, 0.03], [0.027, -0.02]]) {
      const r = resolvePlace(gazetteer(), { town: 'Esch', coords: { lat: 49.91125 + dLat, lng: 5.93512 + dLng } });
      expect(r.ok && r.commune, `${dLat},${dLng}`).toBe('Esch-sur-Sûre');
    }
  });

  // An outside probe (stop 42): 124 of 415 Blumenthal records 0.5-1 km north of the village were
  // rejected as "a locality of several communes (Bech, Junglinster); give a postcode or
  // coordinates" (both namesakes have one point, and the nearest commune was a third).
  it('a locality several communes share at one point, coordinates near it: the namesake commune nearest them', () => {
    for (const [lat, lng] of [[49.75142, 6.27463], [49.74942, 6.267], [49.74457, 6.26611]]) {
      const r = resolvePlace(gazetteer(), { town: 'Blumenthal', coords: { lat, lng } });
      expect(r.ok && [r.commune, r.locality], `${lat},${lng}`).toEqual(['Bech', 'Blumenthal']);
    }
    // Far from every namesake (25 km): still refused.
    expect(resolvePlace(gazetteer(), { town: 'Blumenthal', coords: { lat: 49.55, lng: 5.95 } })).toMatchObject({ ok: false });
  });

  // An outside probe (stop 42): "Erpeldange" with Erpeldange-sur-Sûre's own coordinates was
  // rejected as a village of Bous-Waldbredimus and Wiltz; "Reckange" with Reckange-sur-Mess's
  // coordinates or postcode was placed in Mersch.
  it('a commune\'s short name that villages elsewhere bear: the commune, unless the postcode or coordinates say the village', () => {
    const at = (town: string, postcode: string | null, coords: { lat: number; lng: number } | null) => {
      const r = resolvePlace(gazetteer(), { town, postcode, coords });
      return r.ok ? [r.commune, r.locality] : r.reason;
    };
    expect(at('Erpeldange', null, { lat: 49.87017, lng: 6.1128 })).toEqual(['Erpeldange-sur-Sûre', null]);
    expect(at('Erpeldange', null, { lat: 49.85324, lng: 6.13406 })).toEqual(['Erpeldange-sur-Sûre', null]);
    expect(at('Erpeldange', 'L-9147', null)).toEqual(['Erpeldange-sur-Sûre', null]);
    expect(at('Erpeldange', null, null)).toEqual(['Erpeldange-sur-Sûre', null]);
    expect(at('Erpeldange', 'L-5411', null)).toEqual(['Bous-Waldbredimus', 'Erpeldange']);
    expect(at('Erpeldange', null, { lat: 49.978, lng: 5.9477 })).toEqual(['Wiltz', 'Erpeldange']);
    expect(at('Reckange', null, { lat: 49.56119, lng: 6.00931 })).toEqual(['Reckange-sur-Mess', null]);
    expect(at('Reckange', 'L-3961', null)).toEqual(['Reckange-sur-Mess', null]);
    expect(at('Reckange', null, null)).toEqual(['Reckange-sur-Mess', null]);
    expect(at('Reckange', null, { lat: 49.7489, lng: 6.081 })).toEqual(['Mersch', 'Reckange']);
    expect(at('Reckange (Mersch)', null, null)).toEqual(['Mersch', 'Reckange']);
  });

  // An outside probe (stop 42): `Heisdorf` was Steinsel, but `Résidence Les Jardins, 3 rue
  // Principale, Heisdorf` an unknown place; likewise Rollingen, Bruch and Maulusmühle.
  it('a name several localities bear, beside a street or a residence: read as the name alone is', () => {
    for (const name of ['Heisdorf', 'Rollingen', 'Bruch', 'Maulusmühle']) {
      const alone = place(name);
      expect(Array.isArray(alone), name).toBe(true);
      for (const t of [`Résidence Les Jardins, 3 rue Principale, ${name}`, `3 rue Principale, ${name}`, `${name}, rue Principale 3`]) expect(place(t), t).toEqual(alone);
    }
  });

  it('a postcode written LU-9530 is read as L-9530, in the place and in its field', () => {
    for (const t of ['LU-9530 Wiltz', 'LU9530 Wiltz', 'Wiltz (LU-9530)']) {
      const r = resolvePlace(gazetteer(), { town: t, coords: null });
      expect(r.ok && [r.commune, r.postcode], t).toEqual(['Wiltz', 9530]);
    }
    const f = resolvePlace(gazetteer(), { town: 'Wiltz', postcode: 'LU-9530', coords: null });
    expect(f.ok && f.postcode).toBe(9530);
  });

  it('parts that name places in different communes, or no place, are still rejected, each with its own reason', () => {
    expect(place('Esch-sur-Alzette, Dudelange')).toBe('rejected: "Esch-sur-Alzette, Dudelange" names places of different communes (Esch-sur-Alzette, Dudelange); give one, or coordinates');
    expect(place('Belval, Sanem')).toBe('rejected: "Belval, Sanem" names places of different communes (Esch-sur-Alzette, Sanem); give one, or coordinates');
    // Coordinates settle it.
    expect(place('Belval, Sanem', { coords: { lat: 49.5035, lng: 5.9482 } })).toEqual(['Esch-sur-Alzette', null]);
    expect(place('Arlon, Belgique')).toMatch(/^rejected: "Arlon, Belgique" names a place abroad/);
    expect(place('Thionville (Moselle)')).toMatch(/^rejected: "Thionville \(Moselle\)" names a place abroad/);
    expect(place('Rue de la Gare 12, Paris')).toMatch(/^rejected: unknown commune or locality/);
  });
});

// An outside probe of stop 46: "Centre" (Ville Haute's other name) and "Gare" with coordinates
// or a postcode of another town were stored in the City, their coordinates and postcode dropped.
describe('"Centre" and "Gare", quarters every town has', () => {
  const placeOf = (more: Partial<PlaceInput>) => {
    const r = resolvePlace(gazetteer(), { town: null, coords: null, ...more });
    return r.ok ? [r.commune, r.locality, r.coords !== null, r.postcode] : `rejected: ${r.reason}`;
  };
  const esch = { lat: 49.4958, lng: 5.9806 };
  const ettelbruck = { lat: 49.847, lng: 6.104 };
  it('with coordinates elsewhere: the coordinates place the record, and are kept', () => {
    expect(placeOf({ town: 'Centre', coords: esch })).toEqual(['Esch-sur-Alzette', null, true, null]);
    expect(placeOf({ town: 'Gare', coords: ettelbruck })).toEqual(['Ettelbruck', null, true, null]);
    expect(placeOf({ quarter: 'Gare', coords: esch, postcode: 'L-4170' })).toEqual(['Esch-sur-Alzette', null, true, 4170]);
  });
  it('with a postcode outside the City and no coordinates: rejected, saying why', () => {
    expect(placeOf({ town: 'Centre', postcode: 'L-9201' })).toBe('rejected: "Centre" names a quarter every town has, and the postcode 9201 is not the City\'s; give the commune or coordinates');
  });
  it("in the City, or with nothing else: the City's quarter, as before", () => {
    expect(placeOf({ town: 'Gare', coords: { lat: 49.6, lng: 6.133 } })).toEqual(['Luxembourg', 'Gare', true, null]);
    expect(placeOf({ town: 'Centre', postcode: 'L-1611' })).toEqual(['Luxembourg', 'Ville Haute', false, 1611]);
    expect(placeOf({ town: 'Gare' })).toEqual(['Luxembourg', 'Gare', false, null]);
  });
  it("beside a town's name in one text: that town's", () => {
    expect(place('Avenue de la Gare 12, Centre, L-4131 Esch-sur-Alzette')).toEqual(['Esch-sur-Alzette', null]);
    expect(place('Centre, Esch-sur-Alzette')).toEqual(['Esch-sur-Alzette', null]);
    expect(place('Diekirch - Gare')).toEqual(['Diekirch', null]);
    expect(place('Luxembourg - Gare')).toEqual(['Luxembourg', 'Gare']);
    // Joined to the town's name (a regression probe: unknown places).
    for (const t of ['Ettelbruck Gare', 'Ettelbruck-Gare', 'Gare Ettelbruck', 'Mersch-Gare', 'Differdange Bahnhof']) expect(place(t), t).toEqual([t.replace(/[- ]?(Gare|Bahnhof)[- ]?/, ''), null]);
    expect(place('Luxembourg Gare')).toEqual(['Luxembourg', 'Gare']);
    expect(place('Wecker-Gare')).toEqual(['Biwer', 'Wecker-Gare']);
  });
});

// An outside probe of stop 46: these were rejected as unknown places.
describe("the country's name before a place, and the City's other spellings", () => {
  it('Luxembourg-Howald is Howald (Hesperange); Stadt Luxemburg and Lux-Ville are the City; L-Ville is no name ("L" is dropped as a linking word, and "Ville" alone names no place)', () => {
    expect(place('Luxembourg-Howald')).toEqual(['Hesperange', 'Howald']);
    expect(place('Lux - Bertrange')).toEqual(['Bertrange', null]);
    expect(place('Luxembourg-Kirchberg')).toEqual(['Luxembourg', 'Kirchberg']);
    for (const t of ['Stadt Luxemburg', 'Lux-Ville', 'Lëtzebuerg-Stad', 'Lëtzebuerg Stad']) expect(place(t), t).toEqual(['Luxembourg', null]);
  });
});

describe("HTML's entities in a place text (an XML parser leaves them as written)", () => {
  it('are read: "Wiltz&nbsp;" is Wiltz, "P&eacute;tange" Pétange', () => {
    expect(place('Wiltz&nbsp;')).toEqual(['Wiltz', null]);
    expect(place('P&eacute;tange')).toEqual(['Pétange', null]);
    expect(place('Esch-sur-Alzette &ndash; Lallange')).toEqual(['Esch-sur-Alzette', 'Lalleng']);
  });
});

describe('a short name several communes answer to', () => {
  it('"Esch" is Esch-sur-Alzette unless the postcode or the coordinates are in Esch-sur-Sûre', () => {
    expect(place('Esch')).toEqual(['Esch-sur-Alzette', null]);
    expect(place('Esch', { postcode: 'L-4010' })).toEqual(['Esch-sur-Alzette', null]);
    expect(place('Esch', { postcode: 'L-9650' })).toEqual(['Esch-sur-Sûre', null]);
    expect(place('Esch', { coords: { lat: 49.911, lng: 5.935 } })).toEqual(['Esch-sur-Sûre', null]);
    expect(place('Esch-sur-Alzette', { postcode: 'L-9650' })).toEqual(['Esch-sur-Alzette', null]);
    // The postcode written in the place, and the country after it.
    for (const t of ['L-9650 Esch', 'L 9650 Esch', 'Esch, L-9650']) expect(place(t), t).toEqual(['Esch-sur-Sûre', null]);
    expect(place('Esch, Luxembourg', { postcode: '9650' })).toEqual(['Esch-sur-Sûre', null]);
    // Beside a street too.
    expect(place('1 rue du Pont, L-9650 Esch')).toEqual(['Esch-sur-Sûre', null]);
    expect(place('Grand-Rue, Esch', { postcode: '9650' })).toEqual(['Esch-sur-Sûre', null]);
    expect(place('Grand-Rue, Esch')).toEqual(['Esch-sur-Alzette', null]);
  });
});

// An outside probe of stop 47: French and Luxembourgish names of places refused with a valid
// postcode, a slip of a name its postcode confirms, and degrees-minutes-seconds served with
// floating-point noise.
describe('An outside probe of stop 47', () => {
  it('reads the French and Luxembourgish names of places the reference data lacks, here and in the commune filter', () => {
    for (const [t, commune, locality] of [
      ['Obercorn', 'Differdange', 'Oberkorn'], ['Uewerkuer', 'Differdange', 'Oberkorn'],
      ['Niedercorn', 'Differdange', 'Niederkorn'], ['Nidderkuer', 'Differdange', 'Niederkorn'],
      ['Téiteng', 'Kayl', 'Tétange'], ['Stadgrond', 'Luxembourg', 'Grund'], ['Kirchberg-Kiem', 'Luxembourg', 'Kirchberg'],
      ['Luxembourg-Kirchberg-Kiem', 'Luxembourg', 'Kirchberg'], ['Strassen-Bourgfelt', 'Strassen', null], ['Helfent', 'Bertrange', null],
    ] as const) {
      expect(place(t), t).toEqual([commune, locality]);
    }
    expect(place('Obercorn', { postcode: 'L-4510' })).toEqual(['Differdange', 'Oberkorn']);
    // The API's commune filter reads names with the same gazetteer.
    expect(gazetteer().resolve('Téiteng')).toMatchObject({ kind: 'locality', locality: 'Tétange', communes: ['Kayl'] });
    // "Kiem" alone is also a street of Strassen: no place.
    expect(place('Kiem')).toMatch(/^rejected: unknown commune or locality/);
  });

  it('Hueschtert is either Hostert, as Hostert is: the postcode or the coordinates tell', () => {
    expect(place('Hueschtert', { postcode: 'L-6990' })).toEqual(['Niederanven', 'Hostert']);
    const rambrouch = gazetteer().localitiesOf('Rambrouch').find((l) => l.locality === 'Hostert')!;
    expect(place('Hueschtert', { coords: { lat: rambrouch.lat!, lng: rambrouch.lng! } })).toEqual(['Rambrouch', 'Hostert']);
    expect(place('Hueschtert')).toMatch(/"Hostert" is a locality of several communes/);
  });

  it('a slip of one name is that place when the postcode confirms it; not without a postcode, nor with one elsewhere', async () => {
    expect(place('Diferdange', { postcode: '4601' })).toEqual(['Differdange', null]);
    expect(place('L-4601 Diferdange')).toEqual(['Differdange', null]);
    expect(place('Niederkorm', { postcode: 'L-4510' })).toEqual(['Differdange', 'Niederkorn']);
    expect(place('Diferdange', { postcode: '9530' })).toMatch(/^rejected: unknown commune or locality "Diferdange" \(did you mean Differdange/);
    expect(place('Diferdange')).toMatch(/^rejected: unknown commune or locality "Diferdange" \(did you mean Differdange/);
    // Two names as near: no slip of one ("Rolingen": Olingen or Rollingen).
    expect(place('Rolingen', { postcode: '7555' })).toMatch(/^rejected: unknown commune or locality "Rolingen"/);
    // The regression probe of stop 47: the City's name (or a quarter of it) misspelt, with a
    // postcode outside the City's 1000-2999 whose region holds other communes of its canton, was
    // the City; spelt right, such a record is refused.
    for (const [t, postcode] of [['Luxemboug', '8080'], ['Luxembourgh', '7220'], ['Centr', '8080'], ['Gaare', '3401'], ['Luxenbourg', '5365']]) {
      expect(place(t, { postcode }), `${t} ${postcode}`).toMatch(/^rejected: /);
    }
    expect(place('Luxemboug', { postcode: '1611' })).toEqual(['Luxembourg', null]);
    // Not when another place is as near by one of its other names (the second regression probe of
    // stop 47: "Iischpelt", a slip of Tarchamps' Ischpelt, was Kiischpelt; "Dundelingen", of
    // Dondelange's Dondelingen, was Dudelange).
    for (const [t, postcode] of [['Iischpelt', '9689'], ['Dundelingen', '4123'], ['Hralingen', '9655']]) {
      expect(place(t, { postcode }), t).toMatch(/^rejected: unknown commune or locality/);
    }
    // The slip's own place, not a namesake of its display name (the third regression probe of
    // stop 47: "Reckingenn", a slip of Reckange in Mersch, with 3123 was Reckange-sur-Mess).
    expect(place('Reckingenn', { postcode: '3123' })).toMatch(/^rejected: unknown commune or locality/);
    expect(place('Reckingenn', { postcode: '7520' })).toEqual(['Mersch', 'Reckange']);
    expect(place('Hostert Rambrouh', { postcode: '6990' })).toMatch(/^rejected: /);
    expect(place('Hostert Rambrouh', { postcode: '8814' })).toEqual(['Rambrouch', 'Hostert']);
    // One slip at most, whatever the length.
    expect(place('Diferdnage', { postcode: '4601' })).toMatch(/^rejected: /);
    const r = accepted(normalizeFeed(await parseCsvFeed(csvFeed([csvRow({ ref: 'D1', place: 'Diferdange', postcode: '4601' })])))[0]);
    expect([r.commune, r.locality]).toEqual(['Differdange', null]);
  });

  it('degrees, minutes and seconds are rounded to 7 decimals', async () => {
    expect(parseCoordinate('49°50\'51"N')).toBe(49.8475);
    expect(parseCoordinate('6°07\'55"E')).toBe(6.1319444);
    expect(parseCoordinate('49°36.7\'N')).toBe(49.6116667);
    const l = accepted(normalizeFeed(await parseCsvFeed(csvFeed([csvRow({ ref: 'C1', place: 'Ettelbruck', lat: '49°50\'51"N', lng: '6°07\'55"E' })])))[0]);
    expect([l.lat, l.lng]).toEqual([49.8475, 6.1319444]);
  });
});
