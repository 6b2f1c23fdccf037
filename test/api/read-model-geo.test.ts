import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/demo/random.js';
import { haversineKm } from '../../src/domain/geo.js';
import type { Columns } from '../../src/read-model/columns.js';
import { buildGrid, cellsNear, Circle, SUB2 } from '../../src/read-model/geo-grid.js';

// The read model's radius search skips the grid cells it can prove empty of matches and counts
// the cells it can prove wholly inside the circle without testing their points. Both proofs
// must hold for every point and circle, however close to the limit: checked here point by
// point against the exact test (the parity with SQL itself is test/api/read-model.test.ts).

function gridOf(points: Array<{ lat: number; lng: number }>) {
  const n = points.length;
  const columns = { n, lat: Float64Array.from(points, (p) => p.lat), lng: Float64Array.from(points, (p) => p.lng), bits: new Uint8Array(n) } as unknown as Columns;
  return { grid: buildGrid(columns)!, lat: columns.lat, lng: columns.lng };
}

describe('the read model geo grid', () => {
  it('returns every cell (and subcell) holding a point within the radius, and calls one inside only when all its points are', () => {
    const rng = new Rng(15);
    const points = Array.from({ length: 20_000 }, () => ({ lat: rng.between(49.45, 50.17), lng: rng.between(5.73, 6.53) }));
    const { grid, lat, lng } = gridOf(points);
    const failures: string[] = [];
    for (let k = 0; k < 300; k++) {
      const centre = rng.chance(0.5) ? rng.pick(points) : { lat: rng.between(49.3, 50.3), lng: rng.between(5.6, 6.7) };
      // Radii on a point now and then: points exactly on the circle, or a hair inside or out.
      const target = rng.pick(points);
      const onPoint = haversineKm(centre.lat, centre.lng, target.lat, target.lng);
      const radiusKm = rng.chance(0.3) ? onPoint * (1 + rng.pick([-1e-12, 0, 1e-12])) : 0.5 * Math.pow(60, rng.float());
      const g = { lat: centre.lat, lng: centre.lng, radiusKm };
      const circle = new Circle(g.lat, g.lng, g.radiusKm);
      const cells = new Map(cellsNear(grid, g, true).map((c) => [c.cell, c]));
      for (let cell = 0; cell + 1 < grid.start.length; cell++) {
        const c = cells.get(cell);
        for (let j = grid.start[cell]; j < grid.start[cell + 1]; j++) {
          const i = grid.order[j];
          const within = circle.within(lat[i], lng[i]);
          let s = 0;
          while (grid.sub[cell * SUB2 + s + 1] <= j) s++;
          const bit = 1 << s;
          if (c && !c.inside && (c.subInside & bit) !== 0 && !within) failures.push(`a point outside the radius in an inside subcell: point ${i}, circle ${JSON.stringify(g)}`);
          if (c && !c.inside && ((c.subInside | c.subEdge) & bit) === 0 && within) failures.push(`a point within the radius in a skipped subcell: point ${i}, circle ${JSON.stringify(g)}`);
          const wrong = !c
            ? within && 'a point within the radius in a skipped cell'
            : (c.inside && !within && 'a point outside the radius in an inside cell') ||
              (haversineKm(g.lat, g.lng, lat[i], lng[i]) < c.lowerKm && 'a point nearer than its cell\'s lower bound') ||
              (circle.withinCell(lat[i], lng[i], c.cosMin, c.cosMax) !== within && 'withinCell disagrees with within');
          if (wrong) failures.push(`${wrong}: point ${i} ${lat[i]},${lng[i]}, circle ${JSON.stringify(g)}`);
        }
      }
    }
    expect(failures.slice(0, 10)).toEqual([]);
  });
});
