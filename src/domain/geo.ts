// Great-circle geometry shared by the SQL search (src/repositories/listings.ts holds its SQL
// twin of haversineKm), the read model and the importer. The Earth's mean radius (IUGG).
export const EARTH_RADIUS_KM = 6371.0088;
export const KM_PER_DEG_LAT = (Math.PI / 180) * EARTH_RADIUS_KM;
const RAD = Math.PI / 180;

export interface GeoCircle {
  lat: number;
  lng: number;
  radiusKm: number;
}

// The haversine of the SQL in src/repositories/listings.ts, operation for operation, so that
// the read model decides "within the radius" exactly as PostgreSQL does.
export function haversineKm(lat1: number, lng1: number, lat2: number, lng2: number): number {
  const a = Math.sin(((lat2 - lat1) * RAD) / 2);
  const b = Math.sin(((lng2 - lng1) * RAD) / 2);
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(a * a + Math.cos(lat1 * RAD) * Math.cos(lat2 * RAD) * (b * b))));
}

// A box around the circle (for an index prefilter); the exact distance then decides.
export function boundingBox(g: GeoCircle) {
  const dLat = g.radiusKm / KM_PER_DEG_LAT;
  const latMin = Math.max(-90, g.lat - dLat);
  const latMax = Math.min(90, g.lat + dLat);
  const maxAbsLat = Math.max(Math.abs(latMin), Math.abs(latMax));
  const cos = Math.cos(maxAbsLat * RAD);
  const dLng = cos > 1e-6 ? g.radiusKm / (KM_PER_DEG_LAT * cos) : 360;
  // Near a pole or across the antimeridian the box would wrap: fall back to a latitude band.
  const lngMin = dLng >= 180 ? -180 : g.lng - dLng;
  const lngMax = dLng >= 180 ? 180 : g.lng + dLng;
  return { latMin, latMax, lngMin: Math.max(-180, lngMin), lngMax: Math.min(180, lngMax), wraps: lngMin < -180 || lngMax > 180 };
}
