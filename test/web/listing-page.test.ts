import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { useTestContext } from '../helpers/context.js';
import { bearer, createKey, insertListing } from '../helpers/factory.js';

const t = useTestContext({ app: 'web' });

describe('GET /listings/:id (public, no key)', () => {
  it('shows title, price, type, area, rooms, commune and locality, photos and the link to the source', async () => {
    const l = await insertListing(t.db, {
      title: 'Bright 2-bedroom flat near the Philharmonie',
      price_eur: 2350,
      area_m2: 78.5,
      rooms: 3,
      commune: 'Luxembourg',
      locality: 'Kirchberg',
      listing_type: 'RENT',
      accepts_students: true,
      images: ['https://img.agency.example/a/1.jpg', 'https://img.agency.example/a/2.jpg'],
      source_url: 'https://agency.example/listing/991',
    });
    const res = await request(t.app).get(`/listings/${l.id}`);
    expect(res).toHaveStatus(200);
    expect(res.headers['content-type']).toMatch(/^text\/html; charset=utf-8/);
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(res.text).toContain('<h1>Bright 2-bedroom flat near the Philharmonie</h1>');
    expect(res.text).toContain('€2,350 per month');
    expect(res.text).toContain('<dt>Type</dt><dd>For rent</dd>');
    expect(res.text).toContain('<dt>Area</dt><dd>78.5 m²</dd>');
    expect(res.text).toContain('<dt>Rooms</dt><dd>3</dd>');
    expect(res.text).toContain('<dt>Commune</dt><dd>Luxembourg</dd>');
    expect(res.text).toContain('<dt>Locality</dt><dd>Kirchberg</dd>');
    expect(res.text).toContain('<dt>Students</dt><dd>welcome</dd>');
    expect(res.text).toContain('<img src="https://img.agency.example/a/1.jpg" alt="Photo 1 of 2: Bright 2-bedroom flat near the Philharmonie"');
    expect(res.text).toContain('<img src="https://img.agency.example/a/2.jpg"');
    expect(res.text).toContain('href="https://agency.example/listing/991" rel="noopener noreferrer nofollow"');

    const csp = res.headers['content-security-policy'];
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("img-src 'self' https:");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(res.headers['referrer-policy']).toBe('no-referrer');
  });

  it('is the `url` the API gives for the listing', async () => {
    const l = await insertListing(t.db, { title: 'Studio in Esch', commune: 'Esch-sur-Alzette' });
    const { key } = await createKey(t.db, 'free');
    const api = await request(t.app).get(`/api/v1/listings/${l.id}`).set(bearer(key));
    expect(api).toHaveStatus(200);
    const url = new URL(api.body.url ?? api.body.data?.url);
    const page = await request(t.app).get(url.pathname);
    expect(page).toHaveStatus(200);
    expect(page.text).toContain('Studio in Esch');
  });

  it('shows a sale price without "per month", missing facts plainly, and a native post without a source link', async () => {
    const l = await insertListing(t.db, {
      source: 'native',
      title: 'House for sale',
      listing_type: 'SALE',
      price_eur: 895000,
      area_m2: null,
      rooms: null,
      source_url: null,
    });
    const res = await request(t.app).get(`/listings/${l.id}`);
    expect(res).toHaveStatus(200);
    expect(res.text).toContain('<p class="price">€895,000</p>');
    expect(res.text).toContain('<dt>Area</dt><dd>not given</dd>');
    expect(res.text).toContain('<dt>Rooms</dt><dd>not given</dd>');
    expect(res.text).toContain('Posted directly on our service.');
    expect(res.text).toContain('No photos for this listing.');
  });

  it('escapes everything from the feed and links only http(s) addresses', async () => {
    const l = await insertListing(t.db, {
      title: '<script>alert("x")</script> & "quotes"',
      locality: '<b>Belair</b>',
      images: ['javascript:alert(1)', 'http://insecure.example/1.jpg', 'https://ok.example/1.jpg" onerror="alert(1)'],
      source_url: 'javascript:alert(document.cookie)',
    });
    const res = await request(t.app).get(`/listings/${l.id}`);
    expect(res).toHaveStatus(200);
    expect(res.text).not.toContain('<script>alert');
    expect(res.text).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &quot;quotes&quot;');
    expect(res.text).toContain('&lt;b&gt;Belair&lt;/b&gt;');
    expect(res.text).not.toContain('javascript:');
    expect(res.text).not.toContain('insecure.example');
    expect(res.text).not.toContain('" onerror="');
    expect(res.text).toContain('src="https://ok.example/1.jpg%22%20onerror=%22alert(1)"');
    // An agency's listing without a usable link to it names the agency: it is not a post made
    // on our service (an outside probe: 998 demo listings of two agencies were said to be).
    expect(res.text).toContain('Listed by test-agency, whose feed gives no link to the listing.');
    expect(res.text).not.toContain('Posted directly on our service.');
  });

  it('shows flagged active listings too (the flags themselves are not shown)', async () => {
    const l = await insertListing(t.db, { title: 'Suspiciously cheap loft', flags: ['price_outlier'] });
    const res = await request(t.app).get(`/listings/${l.id}`);
    expect(res).toHaveStatus(200);
    expect(res.text).toContain('Suspiciously cheap loft');
    expect(res.text).not.toContain('price_outlier');
    // Served by the API to Pro and Enterprise keys only, and the page says so (an outside probe of stop 50).
    expect(res.text).toMatch(/GET \/api\/v1\/listings\/lst_\w+<\/code> \(a Pro or Enterprise <a href="\/api-keys">API key<\/a> is needed\)/);
    const plain = await insertListing(t.db, { title: 'A plain loft' });
    expect((await request(t.app).get(`/listings/${plain.id}`)).text).toMatch(/<\/code> \(an <a href="\/api-keys">API key<\/a> is needed\)/);
  });

  it('answers a friendly HTML 404 for inactive, unknown and odd ids', async () => {
    const gone = await insertListing(t.db, { title: 'Withdrawn flat', status: 'inactive', removed_at: new Date() });
    for (const path of [`/listings/${gone.id}`, '/listings/lst_00000000000000000000', `/listings/${'x'.repeat(300)}`, '/listings/%27%3B--', '/listings', '/listings/a/b']) {
      const res = await request(t.app).get(path);
      expect(res, path).toHaveStatus(404);
      expect(res.headers['content-type'], path).toMatch(/^text\/html/);
      expect(res.text).toContain('Listing not found');
      expect(res.text).not.toContain('Withdrawn flat');
    }
  });

  it('sends a merged duplicate to the listing that absorbed it', async () => {
    const kept = await insertListing(t.db, { title: 'The surviving listing' });
    const dup = await insertListing(t.db, { source: 'other-agency', title: 'A duplicate', status: 'merged', merged_into: kept.id });
    const res = await request(t.app).get(`/listings/${dup.id}`);
    expect(res).toHaveStatus(302);
    expect(res.headers.location).toBe(`/listings/${kept.id}`);
  });

  it('does not send a merged duplicate to a flagged listing: its id is kept from Free and Starter keys (an outside probe of stop 49)', async () => {
    const kept = await insertListing(t.db, { title: 'A flagged survivor', flags: ['price_outlier'] });
    const dup = await insertListing(t.db, { source: 'other-agency', title: 'A duplicate', status: 'merged', merged_into: kept.id });
    const res = await request(t.app).get(`/listings/${dup.id}`);
    expect(res).toHaveStatus(404);
    expect(res.headers.location).toBeUndefined();
    expect(res.text).not.toContain(kept.id);
    // The flagged listing's own page still opens for whoever holds its id.
    expect(await request(t.app).get(`/listings/${kept.id}`)).toHaveStatus(200);
  });
});
