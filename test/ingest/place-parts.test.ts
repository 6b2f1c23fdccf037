import { describe, expect, it } from 'vitest';
import { resolvePlace, type PlaceInput } from '../../src/ingest/place.js';
import { gazetteer } from './helpers.js';

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
      expect(place(t), t).toMatch(/^rejected: ".+" names a place abroad \(".+"\): the record may not be in Luxembourg; give the commune alone, or coordinates$/);
    }
    expect(place('Arlon / Steinfort')).toBe('rejected: "Arlon / Steinfort" names a place abroad ("Arlon"): the record may not be in Luxembourg; give the commune alone, or coordinates');
    // A postcode outside the City settles against the country's name.
    expect(place('Rue de Luxembourg, Luxembourg', { postcode: 'L-8077' })).toMatch(/^rejected/);
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
