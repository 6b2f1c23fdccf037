import { Router } from 'express';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { ListingType } from '../domain/listing.js';
import { findActiveListing, findActiveMergeTarget, type PublicListingRow } from '../repositories/listings.js';
import { htmlErrorHandler, htmlNotFound } from './errors.js';
import { html, httpUrl } from './html.js';
import { refuseControlCharacters } from './input.js';
import { page } from './layout.js';
import { onlyMethods } from './methods.js';

const TYPE_LABELS: Record<ListingType, string> = {
  RENT: 'For rent',
  SALE: 'For sale',
  SUBLET: 'Sublet',
  FLATSHARE: 'Room in a flatshare',
};

const eur = new Intl.NumberFormat('en-IE', { style: 'currency', currency: 'EUR', maximumFractionDigits: 0 });
const decimal = new Intl.NumberFormat('en-GB', { maximumFractionDigits: 1 });

function priceText(l: PublicListingRow): string {
  return l.listing_type === 'SALE' ? eur.format(l.price_eur) : `${eur.format(l.price_eur)} per month`;
}

export function listingPage(l: PublicListingRow): string {
  const place = l.locality && l.locality !== l.commune ? `${l.locality}, ${l.commune}` : l.commune;
  // Only https photos: the page's Content-Security-Policy allows no others, and an http
  // image would be mixed content on an https site.
  const photos = (l.images ?? []).map((u) => httpUrl(u, { httpsOnly: true })).filter((u): u is string => u !== null);
  const origin = httpUrl(l.source_url);
  const facts: [string, string][] = [
    ['Type', TYPE_LABELS[l.listing_type] ?? l.listing_type],
    ['Area', l.area_m2 === null ? 'not given' : `${decimal.format(l.area_m2)} m²`],
    ['Rooms', l.rooms === null ? 'not given' : String(l.rooms)],
    ['Commune', l.commune],
    ['Locality', l.locality ?? '–'],
  ];
  if (l.accepts_students) facts.push(['Students', 'welcome']);
  return page({
    title: l.title,
    main: html`<article class="card">
<p class="muted">${TYPE_LABELS[l.listing_type] ?? l.listing_type} · ${place}</p>
<h1>${l.title}</h1>
<p class="price">${priceText(l)}</p>
<dl class="facts">
${facts.map(([k, v]) => html`<div><dt>${k}</dt><dd>${v}</dd></div>`)}
</dl>
${
  photos.length > 0
    ? html`<div class="photos">${photos.map((src, i) => html`<img src="${src}" alt="Photo ${i + 1} of ${photos.length}: ${l.title}" loading="lazy" referrerpolicy="no-referrer">`)}</div>`
    : html`<p class="muted">No photos for this listing.</p>`
}
${
  origin
    ? html`<p><a class="button" href="${origin}" rel="noopener noreferrer nofollow">See the listing at its source (${l.source})</a></p>`
    : l.source === 'native'
      ? html`<p class="muted">Posted directly on our service.</p>`
      : html`<p class="muted">Listed by ${l.source}, whose feed gives no link to the listing.</p>`
}
<p class="muted">Listed ${l.created_at.toISOString().slice(0, 10)}, updated ${l.updated_at.toISOString().slice(0, 10)}. Listing id <code>${l.id}</code>.</p>
</article>
<p class="muted">Developers: this listing is also at <code>GET /api/v1/listings/${l.id}</code> (${
      // A flagged listing is served to Pro and Enterprise keys only (an outside probe of stop 50:
      // the page promised it to any key, and Free and Starter keys get 404).
      l.flags && l.flags.length > 0 ? html`a Pro or Enterprise <a href="/api-keys">API key</a> is needed` : html`an <a href="/api-keys">API key</a> is needed`
    }).</p>`,
  });
}

// GET /listings/:id, the `url` of every listing: public, no key. Any active listing is
// shown, flagged or not: the flags are a data-quality hint for API tiers, and this page
// only repeats what its source publishes (the flags themselves are not shown).
export function listingPagesRouter(deps: { db: Knex; logger: Logger }): Router {
  const r = Router();
  r.use(refuseControlCharacters);
  r.all('/:id', onlyMethods('GET'));
  r.get('/:id', async (req, res, next) => {
    const id = String(req.params.id);
    if (id.length > 64) return next();
    const listing = await findActiveListing(deps.db, id, true);
    if (!listing) {
      // A merged listing leads to the listing that absorbed it, when that one is active and not
      // flagged: its public address keeps working, and leads nobody to an id the API keeps from
      // Free and Starter keys (a flagged target gets the 404 the API gives them).
      const target = await findActiveMergeTarget(deps.db, id, false);
      if (target) return res.redirect(302, `/listings/${encodeURIComponent(target)}`);
      return next();
    }
    res.setHeader('Cache-Control', 'public, max-age=60');
    res.type('html').send(listingPage(listing));
  });
  r.use(htmlNotFound);
  r.use(htmlErrorHandler(deps.logger));
  return r;
}
