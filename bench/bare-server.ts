// The baseline of scenario 10: node:http and pg, nothing else. The same page and exact total
// as the API's SQL path (src/repositories/listings.ts), for a filter or a radius, no cache.
import { createServer } from 'node:http';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.BARE_DB_URL, max: 10 });
const HAV = (a: number) => `(2 * 6371.0088 * asin(least(1, sqrt(power(sin(radians(geo[1] - $${a}) / 2), 2) + cos(radians($${a})) * cos(radians(geo[1])) * power(sin(radians(geo[0] - $${a + 1}) / 2), 2)))))`;

createServer(async (req, res) => {
  const q = new URL(req.url!, 'http://x').searchParams;
  const n = (k: string) => (q.has(k) ? Number(q.get(k)) : undefined);
  const where = [`status = 'active'`, 'NOT flagged'];
  const args: unknown[] = [];
  const add = (sql: string, ...v: unknown[]) => where.push(sql.replace(/\?/g, () => `$${args.push(v.shift())}`));
  if (q.has('commune')) add('commune = ?', q.get('commune'));
  if (q.has('listing_type')) add('listing_type = ?', q.get('listing_type'));
  if (n('min_price') !== undefined) add('price_eur >= ?', n('min_price'));
  if (n('max_price') !== undefined) add('price_eur <= ?', n('max_price'));
  if (n('min_rooms') !== undefined) add('rooms >= ?', n('min_rooms'));
  const [lat, lng, r] = [n('lat'), n('lng'), n('radius_km')];
  let order = 'created_at DESC, id';
  let dist = 'NULL';
  if (lat !== undefined && lng !== undefined && r !== undefined) {
    const d = r / 111.2;
    const e = d / Math.cos((lat * Math.PI) / 180);
    add('geo <@ box(point(?, ?), point(?, ?))', lng - e, lat - d, lng + e, lat + d);
    dist = HAV(args.push(lat));
    args.push(lng);
    where.push(`${dist} <= ${r + 1e-9}`);
    order = 'distance_km, id';
  }
  const page = n('page') ?? 1;
  const w = where.join(' AND ');
  try {
    const [rows, count] = await Promise.all([
      pool.query(`SELECT id, title, price_eur, area_m2, rooms, commune, locality, lat, lng, listing_type, created_at, ${dist} AS distance_km FROM listings WHERE ${w} ORDER BY ${order} LIMIT 20 OFFSET ${(page - 1) * 20}`, args),
      pool.query(`SELECT count(*)::int AS n FROM listings WHERE ${w}`, args),
    ]);
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ data: rows.rows, meta: { total: count.rows[0].n, page } }));
  } catch (err) {
    res.writeHead(500).end(String(err));
  }
}).listen(Number(process.env.PORT), '127.0.0.1');
