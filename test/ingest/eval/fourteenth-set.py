#!/usr/bin/env python3
"""The fourteenth evaluation set of deduplication: written by an outside session of stop 56 ("dedup2"),
in Python as it wrote it, from its own description of the noise, without reading the project's rule,
generators or the dedup sections of the docs. Four agencies (two CSV, JSON, OpenImmo), 3,400 properties,
850 listed by two or three; each agency its own mix of street and locality postcodes; hard negatives:
sibling flats of one building, look-alikes of one quarter, twin houses, a flat let and sold, one agency's
two flats in one building. Its noise: test/ingest/eval/README.md.
Usage: python3 test/ingest/eval/fourteenth-set.py OUT [reference data folder=data/ of the repository] (SEED=20261201)
Writes OUT/feeds/ and OUT/set/ (one file per agency), OUT/truth.csv, OUT/truth_props.json and
OUT/set/truth.json: `npx tsx test/ingest/eval/run.ts --sets dir:OUT/set`."""
import csv, json, math, os, random, sys, unicodedata, hashlib
from xml.sax.saxutils import escape

SEED = int(os.environ.get('SEED', '20261201'))
rnd = random.Random(SEED)
OUT = sys.argv[1] if len(sys.argv) > 1 else sys.exit('usage: fourteenth-set.py OUT [shared data folder]')
D = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../../data')

communes = {r['name']: r for r in csv.DictReader(open(f'{D}/communes.csv', encoding='utf-8'))}
locs = [r for r in csv.DictReader(open(f'{D}/localities.csv', encoding='utf-8'))]
rents = {r['commune']: r for r in csv.DictReader(open(f'{D}/rents.csv', encoding='utf-8'))}
quart = {r['quartier']: r for r in csv.DictReader(open(f'{D}/rents_luxembourg_city_quartiers.csv', encoding='utf-8'))}

def fnum(s, d=None):
    try:
        return float(s)
    except (TypeError, ValueError):
        return d

NAT = rents.get('(national average)', {})
NAT_RENT_M2 = fnum(NAT.get('apt_rent_avg_eur_m2_month'), 33.0) or 33.0

def strip_acc(s):
    return ''.join(c for c in unicodedata.normalize('NFD', s) if unicodedata.category(c) != 'Mn')

# ---------- places ----------
places = []
for l in locs:
    c = communes.get(l['commune'])
    if not c:
        continue
    lat = fnum(l['lat']) or float(c['lat'])
    lng = fnum(l['lng']) or float(c['lng'])
    places.append(dict(name=l['locality'], official=l['locality_official_form'] or l['locality'], alt=l['alt_names'],
                       commune=l['commune'], kind=l['kind'], lat=lat, lng=lng, canton=c['canton']))
by_commune = {}
for p in places:
    by_commune.setdefault(p['commune'], []).append(p)
weights = []
for p in places:
    c = communes[p['commune']]
    pop = fnum(c['population'], 2000)
    n = len(by_commune[p['commune']])
    w = pop / n
    if p['name'] == p['commune']:
        w *= 2.5
    if p['commune'] == 'Luxembourg' and p['kind'] == 'locality':
        w *= 0.3  # the city itself is spread over its quarters
    weights.append(w)

def h(s):
    return int(hashlib.md5(s.encode()).hexdigest()[:8], 16)

def base_postcode(p):
    cant = p['canton']
    if p['commune'] == 'Luxembourg':
        lo, hi = 1010, 2990
    elif cant == 'Esch-sur-Alzette':
        lo, hi = 3200, 4990
    elif cant in ('Capellen',):
        lo, hi = 8200, 8990
    elif cant == 'Mersch':
        lo, hi = 7400, 7790
    elif cant in ('Grevenmacher', 'Remich', 'Echternach'):
        lo, hi = 5400, 6990
    elif cant == 'Luxembourg':
        lo, hi = 5800, 8150
    else:
        lo, hi = 9000, 9950
    return lo + (h(p['name'] + p['commune']) % ((hi - lo) // 10)) * 10

def rate(p, kind, offer):
    """EUR per m2 (per month for rent)."""
    r = rents.get(p['commune'], {})
    q = quart.get(p['name']) if p['commune'] == 'Luxembourg' else None
    if offer == 'rent':
        v = fnum(q and q['apt_rent_avg_eur_m2_month']) or fnum(r.get('apt_rent_avg_eur_m2_month')) or NAT_RENT_M2 * 0.85
        if kind == 'house':
            v = fnum(r.get('house_rent_avg_eur_m2_month')) or v * 0.75
        return v
    if kind == 'house':
        return fnum(q and q['house_sale_advertised_avg_eur_m2']) or fnum(r.get('house_sale_advertised_avg_eur_m2')) or 6800
    return fnum(q and q['apt_sale_advertised_avg_eur_m2']) or fnum(r.get('apt_sale_advertised_avg_eur_m2')) or 8200

M_LAT, M_LNG = 1 / 111000, 1 / 72000

def offset(lat, lng, meters):
    a = rnd.uniform(0, 2 * math.pi)
    d = meters
    return lat + math.sin(a) * d * M_LAT, lng + math.cos(a) * d * M_LNG

# ---------- properties ----------
props = []

def new_prop(kind, offer, place, lat, lng, area, beds, price, floor=None, group=None, neg=None, building=None):
    pid = f'P{len(props) + 1:05d}'
    st = rnd.randint(0, 30)
    pr = dict(pid=pid, kind=kind, offer=offer, place=place, lat=lat, lng=lng, area=area, beds=beds, price=price,
              floor=floor, neg=neg, group=group, building=building, street_pc=base_postcode(place) + st,
              loc_pc=base_postcode(place), charges=0)
    if offer == 'rent':
        pr['charges'] = int(round(max(80, area * rnd.uniform(2.2, 3.8)) / 10) * 10)
    props.append(pr)
    return pr

def pick_place(city_bias=False):
    if city_bias and rnd.random() < 0.6:
        cands = [p for p in places if p['commune'] in ('Luxembourg', 'Esch-sur-Alzette') and p['kind'] != 'locality']
        return rnd.choice(cands)
    return rnd.choices(places, weights)[0]

def layout(kind):
    if kind == 'house':
        beds = rnd.choice([3, 3, 4, 4, 4, 5])
        area = round(rnd.uniform(110, 150) + 22 * (beds - 3) + rnd.uniform(0, 40), 1)
    else:
        beds = rnd.choices([0, 1, 2, 3, 4], [8, 30, 38, 19, 5])[0]
        base = {0: (26, 42), 1: (45, 68), 2: (68, 98), 3: (92, 130), 4: (120, 165)}[beds]
        area = round(rnd.uniform(*base), 1)
    if rnd.random() < 0.5:
        area = float(round(area))
    return area, beds

def price_for(place, kind, offer, area):
    v = rate(place, kind, offer) * area * rnd.uniform(0.85, 1.15)
    return int(round(v / 10) * 10) if offer == 'rent' else int(round(v / 1000) * 1000)

def plain(kind=None, offer=None, place=None, neg=None):
    kind = kind or ('house' if rnd.random() < 0.28 else 'flat')
    offer = offer or ('rent' if rnd.random() < 0.42 else 'sale')
    place = place or pick_place()
    lat, lng = offset(place['lat'], place['lng'], rnd.uniform(30, 900 if place['kind'] == 'locality' else 500))
    area, beds = layout(kind)
    floor = rnd.randint(0, 5) if kind == 'flat' else None
    return new_prop(kind, offer, place, lat, lng, area, beds, price_for(place, kind, offer, area), floor=floor, neg=neg)

# hard negatives
bld = 0
# 1. sibling flats in one building: same layout, different floors
for _ in range(110):
    bld += 1
    place = pick_place(city_bias=True)
    lat, lng = offset(place['lat'], place['lng'], rnd.uniform(30, 500))
    offer = 'rent' if rnd.random() < 0.5 else 'sale'
    area, beds = layout('flat')
    price = price_for(place, 'flat', offer, area)
    floors = rnd.sample(range(0, 7), rnd.choice([2, 2, 2, 3, 3, 4]))
    for f in floors:
        a = area if rnd.random() < 0.7 else round(area + rnd.choice([-1, 1]) * rnd.uniform(0.3, 1.5), 1)
        pr = price if rnd.random() < 0.5 else (int(round(price * (1 + 0.01 * f) / (10 if offer == 'rent' else 1000))) * (10 if offer == 'rent' else 1000))
        new_prop('flat', offer, place, lat, lng, a, beds, pr, floor=f, group=f'B{bld}', neg='sibling', building=f'B{bld}')
# 2. look-alike flats in one quarter (different buildings 80-400 m apart)
for i in range(90):
    place = pick_place(city_bias=True)
    lat, lng = offset(place['lat'], place['lng'], rnd.uniform(30, 400))
    offer = 'rent' if rnd.random() < 0.5 else 'sale'
    area, beds = layout('flat')
    price = price_for(place, 'flat', offer, area)
    for j in range(2):
        la, ln = (lat, lng) if j == 0 else offset(lat, lng, rnd.uniform(80, 400))
        a = area if j == 0 else round(area + rnd.uniform(-2, 2), 1 if rnd.random() < 0.5 else 0)
        p2 = price if j == 0 else int(round(price * rnd.uniform(0.975, 1.025) / (10 if offer == 'rent' else 1000))) * (10 if offer == 'rent' else 1000)
        new_prop('flat', offer, place, la, ln, a, beds, p2, floor=rnd.randint(0, 5), group=f'L{i}', neg='lookalike')
# 3. twin houses (semi-detached pairs 12-25 m apart)
for i in range(60):
    place = pick_place()
    lat, lng = offset(place['lat'], place['lng'], rnd.uniform(50, 900))
    offer = 'sale' if rnd.random() < 0.8 else 'rent'
    area, beds = layout('house')
    price = price_for(place, 'house', offer, area)
    for j in range(2):
        la, ln = (lat, lng) if j == 0 else offset(lat, lng, rnd.uniform(12, 25))
        a = area if rnd.random() < 0.6 else round(area + rnd.uniform(-1.5, 1.5))
        p2 = price if rnd.random() < 0.6 else int(round(price * rnd.uniform(0.98, 1.02) / 1000)) * 1000 if offer == 'sale' else price + rnd.choice([-20, 20])
        new_prop('house', offer, place, la, ln, a, beds, p2, group=f'T{i}', neg='twin')
# 4. one flat offered for rent and for sale (two properties, must not merge)
for i in range(50):
    place = pick_place(city_bias=True)
    lat, lng = offset(place['lat'], place['lng'], rnd.uniform(30, 600))
    area, beds = layout('flat')
    f = rnd.randint(0, 5)
    for offer in ('rent', 'sale'):
        new_prop('flat', offer, place, lat, lng, area, beds, price_for(place, 'flat', offer, area), floor=f, group=f'RS{i}', neg='rent_sale', building=f'RS{i}')
# 5. same agency's two flats in one building (forced single source, same agency)
same_agency_groups = []
for i in range(60):
    bld += 1
    place = pick_place(city_bias=True)
    lat, lng = offset(place['lat'], place['lng'], rnd.uniform(30, 500))
    offer = 'rent' if rnd.random() < 0.5 else 'sale'
    area, beds = layout('flat')
    price = price_for(place, 'flat', offer, area)
    g = []
    for f in rnd.sample(range(0, 6), 2):
        a = area if rnd.random() < 0.6 else round(area + rnd.uniform(-2, 2), 1)
        g.append(new_prop('flat', offer, place, lat, lng, a, beds, price if rnd.random() < 0.5 else int(price * rnd.uniform(0.98, 1.02) / 10) * 10, floor=f, group=f'S{i}', neg='same_agency', building=f'B{bld}'))
    same_agency_groups.append(g)
same_agency_pids = {p['pid'] for g in same_agency_groups for p in g}
N_TOTAL = 3400
while len(props) < N_TOTAL:
    plain()

# ---------- agencies ----------
AG = {
    'sud-immo': dict(format='csv', ext='csv'),
    'centre-lux': dict(format='csv', ext='csv'),
    'capital-crm': dict(format='json', ext='json'),
    'nordwest-oi': dict(format='openimmo', ext='xml'),
}
AGS = list(AG)
AG_W = [1.0, 1.1, 1.0, 0.9]
# sud-immo and nordwest-oi are regional: sud stronger in Esch canton, nordwest in the north
def ag_weights(pr):
    w = list(AG_W)
    if pr['place']['canton'] == 'Esch-sur-Alzette':
        w[0] *= 2.2
    if pr['place']['canton'] in ('Clervaux', 'Wiltz', 'Vianden', 'Diekirch', 'Redange', 'Mersch', 'Echternach'):
        w[3] *= 2.2
    if pr['place']['commune'] == 'Luxembourg':
        w[1] *= 1.6; w[2] *= 1.6
    return w

def choose_agencies(pr, n):
    w = ag_weights(pr)
    out = []
    while len(out) < n:
        a = rnd.choices(AGS, w)[0]
        if a not in out:
            out.append(a)
    return out

pool = [p for p in props if p['pid'] not in same_agency_pids]
rnd.shuffle(pool)
multi = pool[:850]
for i, p in enumerate(multi):
    p['n_agencies'] = 3 if i < 250 else 2
for p in pool[850:]:
    p['n_agencies'] = 1
for p in props:
    if p['pid'] in same_agency_pids:
        p['n_agencies'] = 1
for p in props:
    p['agencies'] = choose_agencies(p, p['n_agencies'])
for g in same_agency_groups:
    a = rnd.choice(AGS)
    for p in g:
        p['agencies'] = [a]
# a third of the multi-listed have a coordinate missing on one side
for i, p in enumerate(multi):
    p['coord_plan'] = 'one_missing' if i % 3 == 0 else 'all_present'
# a price cut some agencies have passed on and the slow one has not
for p in props:
    p['cut'] = rnd.random() < 0.18
    p['cut_f'] = rnd.uniform(0.975, 0.99) if rnd.random() < 0.8 else rnd.uniform(0.94, 0.975)

# ---------- rendering per agency ----------
def fr_floor(f):
    return 'rez-de-chaussée' if f == 0 else ('1er étage' if f == 1 else f'{f}e étage')
def de_floor(f):
    return 'EG' if f == 0 else f'{f}. OG'
def en_floor(f):
    return 'ground floor' if f == 0 else ({1: '1st', 2: '2nd', 3: '3rd'}.get(f, f'{f}th') + ' floor')

def title(pr, lang, locname, show_floor, charges_note=False):
    b = pr['beds']; r = b + 1; k = pr['kind']
    if lang == 'fr':
        if k == 'house':
            t = rnd.choice([f'Maison {b} chambres à {locname}', f'Maison jumelée {b} ch. avec jardin', f'Belle maison familiale - {locname}', f'Maison unifamiliale {b} chambres'])
            if pr['neg'] == 'twin' and rnd.random() < 0.5:
                t = f'Maison jumelée {b} chambres à {locname}'
        elif b == 0:
            t = rnd.choice([f'Studio à {locname}', f'Studio meublé {locname}', 'Studio lumineux proche commerces'])
        else:
            t = rnd.choice([f'Appartement {b} chambre{"s" if b > 1 else ""} à {locname}', f'Bel appartement {b} ch. - {locname}',
                            f'Appartement lumineux avec balcon', f'Appartement {b} chambres, {locname}', f'Duplex {b} chambres'])
        if show_floor and pr['floor'] is not None:
            t += f' ({fr_floor(pr["floor"])})' if rnd.random() < 0.5 else f', {fr_floor(pr["floor"])}'
        if pr['offer'] == 'rent' and charges_note:
            t += ' - charges comprises'
    elif lang == 'de':
        if k == 'house':
            t = rnd.choice([f'Einfamilienhaus mit Garten in {locname}', f'Doppelhaushälfte in {locname}', f'Haus mit {b} Schlafzimmern', f'Reihenhaus {locname}'])
            if pr['neg'] == 'twin' and rnd.random() < 0.5:
                t = f'Doppelhaushälfte in {locname}'
        elif b == 0:
            t = rnd.choice([f'Studio in {locname}', f'1-Zimmer-Apartment {locname}'])
        else:
            t = rnd.choice([f'{r}-Zimmer-Wohnung in {locname}', f'Helle {r}-Zimmer-Wohnung mit Balkon', f'Wohnung mit {b} Schlafzimmern, {locname}', f'Schöne Etagenwohnung in {locname}'])
        if show_floor and pr['floor'] is not None:
            t += f', {de_floor(pr["floor"])}' if rnd.random() < 0.5 else (f' im {pr["floor"]}. Stock' if pr['floor'] else ' im Erdgeschoss')
        if pr['offer'] == 'rent' and charges_note:
            t += ' (warm)'
    else:
        if k == 'house':
            t = rnd.choice([f'{b}-bedroom house in {locname}', f'Semi-detached house with garden, {locname}', f'Family home in {locname}'])
        elif b == 0:
            t = rnd.choice([f'Studio in {locname}', f'Furnished studio, {locname}'])
        else:
            t = rnd.choice([f'{b}-bedroom apartment in {locname}', f'Bright {b}-bed flat, {locname}', f'Modern {b}-bedroom flat with balcony', f'Spacious apartment in {locname}'])
        if show_floor and pr['floor'] is not None:
            t += f', {en_floor(pr["floor"])}'
        if pr['offer'] == 'rent' and charges_note:
            t += ', charges included'
    return t

LUX_FORMS = {'Gare': ['Luxembourg-Gare', 'Gare', 'LUXEMBOURG GARE', 'Luxemburg-Bahnhof'],
             'Kirchberg': ['Kirchberg', 'Luxembourg-Kirchberg', 'Kiirchbierg'],
             'Belair': ['Belair', 'Luxembourg-Belair', 'Belair (Luxembourg)'],
             'Limpertsberg': ['Limpertsberg', 'Luxembourg-Limpertsberg', 'Lampertsbierg']}

def locality_text(pr, ag):
    """How the agency writes the place: locality/quarter in FR/DE/LU, or only the commune."""
    p = pr['place']; c = communes[p['commune']]
    forms = []
    if p['kind'] == 'quartier_luxembourg_city':
        forms += LUX_FORMS.get(p['name'], [p['name'], f'Luxembourg-{p["name"]}'])
    elif p['kind'] == 'quartier_esch':
        forms += [p['name'], f'Esch-sur-Alzette ({p["name"]})' if False else p['name']]
    else:
        forms += [p['official'], p['name']]
        if p['alt']:
            forms += [p['alt']]
    commune_forms = [c['name'], c['name_lb'], c['name_de']]
    r = rnd.random()
    if r < 0.22:
        s = rnd.choice(commune_forms)  # only the commune
    else:
        s = rnd.choice(forms)
    if ag == 'sud-immo':
        if rnd.random() < 0.35:
            s = strip_acc(s).upper()
        s = s.replace('Esch-sur-Alzette', 'ESCH/ALZETTE' if rnd.random() < 0.5 else 'Esch-sur-Alzette')
    if ag == 'centre-lux' and rnd.random() < 0.2:
        s = strip_acc(s)
    return s

def coords_for(pr, ag, force_missing=False, force_present=False):
    p = pr['place']; c = communes[p['commune']]
    if force_missing:
        return None
    mode_w = {'sud-immo': [50, 25, 5, 20], 'centre-lux': [35, 15, 25, 25],
              'capital-crm': [60, 10, 5, 25], 'nordwest-oi': [15, 55, 10, 20]}[ag]
    modes = ['building', 'street', 'centroid', 'missing']
    if force_present:
        mode_w = mode_w[:3]; modes = modes[:3]
    m = rnd.choices(modes, mode_w)[0]
    if m == 'building':
        return offset(pr['lat'], pr['lng'], abs(rnd.gauss(0, 8)))
    if m == 'street':
        return offset(pr['lat'], pr['lng'], rnd.uniform(50, 180))
    if m == 'centroid':
        if rnd.random() < 0.6:
            return float(c['lat']), float(c['lng'])
        return p['lat'], p['lng']
    return None

def stated_area(pr, ag):
    a = pr['area']
    r = rnd.random()
    if rnd.random() < 0.04:
        return None
    if ag == 'sud-immo':  # rounded
        v = float(round(a))
    elif ag == 'centre-lux':  # usable area (surface utile), a little larger, decimals
        v = round(a + rnd.uniform(0, 1.2), 1)
    elif ag == 'capital-crm':
        v = a if r < 0.7 else round(a + rnd.uniform(-0.8, 0.8), 1)
    else:
        v = round(a - rnd.uniform(0, 0.8), 2)  # Wohnflaeche (DIN, slopes count less)
    if rnd.random() < 0.04:  # tail: balcony/terrace or cellar counted in
        v = round(v + rnd.uniform(4, 12), 1)
    return v

def stated_price(pr, ag):
    p = pr['price']; rent = pr['offer'] == 'rent'
    if pr['cut'] and ag != 'nordwest-oi':
        p = p * pr['cut_f']  # cut passed on; the slow agency still shows the old price
    if rent:
        charges_incl = (ag == 'capital-crm' and rnd.random() < 0.25) or (ag == 'centre-lux' and rnd.random() < 0.1)
        if charges_incl:
            # usually the flat-rate charges the agency folds in are small; sometimes the full advance
            p += pr['charges'] if rnd.random() < 0.2 else p * rnd.uniform(0.008, 0.02)
        p = int(round(p / (50 if ag == 'sud-immo' else 10)) * (50 if ag == 'sud-immo' else 10))
        return p, charges_incl
    p = int(round(p / (5000 if ag == 'sud-immo' else 1000)) * (5000 if ag == 'sud-immo' else 1000))
    return p, False

def postcode_for(pr, ag):
    habit = {'sud-immo': 0.8, 'centre-lux': 0.25, 'capital-crm': 0.6, 'nordwest-oi': 0.5}[ag]  # share street postcode
    if rnd.random() < 0.08:
        return None
    return pr['street_pc'] if rnd.random() < habit else pr['loc_pc']

records = {a: [] for a in AGS}
counters = {a: 1000 for a in AGS}
PREFIX = {'sud-immo': 'SI-', 'centre-lux': 'CL', 'capital-crm': 'CAP-', 'nordwest-oi': 'NW-2026-'}
truth = []
for pr in props:
    ags = pr['agencies']
    missing_idx = rnd.randrange(len(ags)) if pr.get('coord_plan') == 'one_missing' else -1
    for i, ag in enumerate(ags):
        counters[ag] += rnd.randint(1, 4)
        ext = f'{PREFIX[ag]}{counters[ag]}'
        area = stated_area(pr, ag)
        price, ch = stated_price(pr, ag)
        fm = i == missing_idx
        fp = pr.get('coord_plan') in ('one_missing', 'all_present') and not fm
        co = coords_for(pr, ag, force_missing=fm, force_present=fp)
        lang = {'sud-immo': rnd.choice(['fr', 'fr', 'fr', 'en']), 'centre-lux': rnd.choice(['fr', 'en', 'en']),
                'capital-crm': 'x', 'nordwest-oi': rnd.choice(['de', 'de', 'fr'])}[ag]
        show_floor = rnd.random() < 0.25
        loc = locality_text(pr, ag)
        tname = pr['place']['name'] if pr['place']['kind'] != 'locality' else (pr['place']['official'])
        rec = dict(pid=pr['pid'], ext=ext, ag=ag, area=area, price=price, charges_incl=ch, coords=co, loc=loc,
                   pc=postcode_for(pr, ag), show_floor=show_floor, lang=lang, tname=tname)
        if lang == 'x':
            rec['title'] = {'fr': title(pr, 'fr', tname, show_floor, ch), 'en': title(pr, 'en', tname, show_floor, ch)}
            if rnd.random() < 0.2:
                rec['title'] = rec['title']['fr']
        else:
            rec['title'] = title(pr, lang, tname, show_floor, ch and rnd.random() < 0.6)
        # room counting habits
        b = pr['beds']
        if ag == 'sud-immo':
            rec['pieces'], rec['chambres'] = '', str(b)
        elif ag == 'centre-lux':
            x = rnd.random()
            if x < 0.5:
                rec['pieces'], rec['chambres'] = str(b + 1), str(b)
            elif x < 0.75:
                rec['pieces'], rec['chambres'] = str(b + 1), ''
            elif x < 0.9:
                rec['pieces'], rec['chambres'] = str(max(b, 1)), ''  # bedrooms typed in the rooms column
            else:
                rec['pieces'], rec['chambres'] = '', ''
        elif ag == 'capital-crm':
            rec['bedrooms'] = b
        else:
            z = b + 1
            if pr['kind'] == 'house' and rnd.random() < 0.3:
                z = b + 2  # Wohnzimmer + Esszimmer
            rec['zimmer'] = f'{z}.5' if rnd.random() < 0.15 else str(z)
        rec['created'] = f'{rnd.randint(1, 28):02d}/{rnd.randint(9, 11):02d}/2026 {rnd.randint(8, 19):02d}:{rnd.choice(["00", "15", "30", "45"])}'
        records[ag].append(rec)
        truth.append(dict(source=ag, external_id=ext, pid=pr['pid'], stated_area=area, stated_price=price,
                          charges_included=ch, coords=co is not None))

# ---------- writers ----------
def fmt_price_csv(p, ag):
    if ag == 'sud-immo':
        s = f'{p:,}'.replace(',', ' ')
        return rnd.choice([s, s + ' €', '€ ' + s])
    s = f'{p:,}'.replace(',', '.')
    return rnd.choice([s, str(p), f'{p},00'])

def fmt_num(x, comma):
    s = f'{x:.5f}'
    return s.replace('.', ',') if comma else s

def fmt_area(a, ag):
    if a is None:
        return ''
    s = (f'{a:.1f}'.rstrip('0').rstrip('.')) if a != int(a) else str(int(a))
    if ag == 'centre-lux':
        s = s.replace('.', ',')
        return s + ' m²' if rnd.random() < 0.4 else s
    return s

def write_csv(ag, recs, path):
    H = "Référence;Type d'offre;Type de bien;Titre;Prix;Surface;Pièces;Chambres;Localité;Code postal;Latitude;Longitude;Photos;Étudiants;Date de création;Lien;Agent"
    props_by = {p['pid']: p for p in props}
    with open(path, 'w', encoding='utf-8', newline='') as f:
        f.write('\ufeff' + H + '\r\n')
        w = csv.writer(f, delimiter=';', quotechar='"', quoting=csv.QUOTE_MINIMAL, lineterminator='\r\n')
        for r in recs:
            pr = props_by[r['pid']]
            comma = ag == 'sud-immo' or rnd.random() < 0.3
            lat = lng = ''
            if r['coords']:
                lat, lng = fmt_num(r['coords'][0], comma), fmt_num(r['coords'][1], comma)
            offer = {'rent': rnd.choice(['Location', 'location', 'LOCATION']), 'sale': rnd.choice(['Vente', 'VENTE'])}[pr['offer']]
            pc = ''
            if r['pc']:
                pc = f'L-{r["pc"]}' if rnd.random() < 0.5 else str(r['pc'])
            w.writerow([r['ext'], offer, 'Maison' if pr['kind'] == 'house' else 'Appartement', r['title'], fmt_price_csv(r['price'], ag),
                        fmt_area(r['area'], ag), r['pieces'], r['chambres'], r['loc'], pc, lat, lng,
                        f'https://photos.{ag}.example/{r["ext"]}/1.jpg', rnd.choice(['non', '', 'oui']) if pr['offer'] == 'rent' else 'non',
                        r['created'], f'https://www.{ag}.example/biens/{r["ext"]}', rnd.choice(['Anne', 'Marc', 'Sophie', ''])])

def write_json(ag, recs, path):
    props_by = {p['pid']: p for p in props}
    out = []
    for r in recs:
        pr = props_by[r['pid']]
        d, mo = r['created'].split(' ')[0].split('/')[:2]
        out.append({
            'ref': r['ext'], 'offer': pr['offer'], 'status': 'available', 'title': r['title'],
            'price': {'amount': r['price'], 'currency': 'EUR', 'period': 'month' if pr['offer'] == 'rent' else None},
            'surface_m2': r['area'], 'bedrooms': r['bedrooms'],
            'address': {'street': None, 'locality': r['loc'], 'postcode': (f'L-{r["pc"]}' if r['pc'] else None), 'country': 'LU'},
            'geo': ({'lat': round(r['coords'][0], 6), 'lon': round(r['coords'][1], 6)} if r['coords'] else None),
            'media': [{'type': 'photo', 'url': f'https://cdn.{ag}.example/{r["ext"]}/01.jpg'}],
            'students': False, 'published_at': f'2026-{mo}-{d}T08:00:00Z', 'link': f'https://{ag}.example/listing/{r["ext"]}'})
    for o in out:
        if o['price']['period'] is None:
            del o['price']['period']
    with open(path, 'w', encoding='utf-8') as f:
        json.dump({'agency': 'Capital CRM', 'generated_at': '2026-11-30T06:00:00+01:00', 'mode': 'full', 'listings': out}, f, ensure_ascii=False, indent=1)

def write_oi(ag, recs, path):
    props_by = {p['pid']: p for p in props}
    L = ['<?xml version="1.0" encoding="UTF-8"?>', '<openimmo>',
         '  <uebertragung art="OFFLINE" umfang="VOLL" modus="NEW" version="1.2.7" sendersoftware="dedup2" techn_email="it@nordwest.example"/>',
         '  <anbieter>', '    <anbieternr>NW-1</anbieternr>', '    <firma>Nordwest Immobilien</firma>']
    for r in recs:
        pr = props_by[r['pid']]
        kauf = pr['offer'] == 'sale'
        art = '<haus haustyp="DOPPELHAUSHAELFTE"/>' if pr['kind'] == 'house' else '<wohnung wohnungtyp="ETAGE"/>'
        c = communes[pr['place']['commune']]
        # ort: the commune (often its German form) and the locality as regionaler_zusatz, or the locality as ort
        if rnd.random() < 0.5:
            ort, zus = rnd.choice([c['name'], c['name_de']]), r['loc']
        else:
            ort, zus = r['loc'], None
        L.append('    <immobilie>')
        L.append('      <objektkategorie>')
        L.append('        <nutzungsart WOHNEN="true" GEWERBE="false"/>')
        L.append(f'        <vermarktungsart KAUF="{str(kauf).lower()}" MIETE_PACHT="{str(not kauf).lower()}"/>')
        L.append(f'        <objektart>{art}</objektart>')
        L.append('      </objektkategorie>')
        L.append('      <geo>')
        if r['pc']:
            L.append(f'        <plz>{"L-" if rnd.random() < 0.5 else ""}{r["pc"]}</plz>')
        L.append(f'        <ort>{escape(ort)}</ort>')
        if zus and zus != ort:
            L.append(f'        <regionaler_zusatz>{escape(zus)}</regionaler_zusatz>')
        if r['coords']:
            L.append(f'        <geokoordinaten breitengrad="{r["coords"][0]:.5f}" laengengrad="{r["coords"][1]:.5f}"/>')
        L.append('        <land iso_land="LUX"/>')
        L.append('      </geo>')
        L.append('      <preise>')
        if kauf:
            L.append(f'        <kaufpreis>{r["price"]}</kaufpreis>')
        else:
            L.append(f'        <kaltmiete>{r["price"]}.00</kaltmiete>')
            L.append(f'        <nebenkosten>{pr["charges"]}.00</nebenkosten>')
        L.append('        <waehrung iso_waehrung="EUR"/>')
        L.append('      </preise>')
        L.append('      <flaechen>')
        if r['area'] is not None:
            L.append(f'        <wohnflaeche>{r["area"]:.2f}</wohnflaeche>')
        L.append(f'        <anzahl_zimmer>{r["zimmer"]}</anzahl_zimmer>')
        L.append('      </flaechen>')
        t = r['title'] if isinstance(r['title'], str) else r['title']['fr']
        L.append(f'      <freitexte><objekttitel>{escape(t)}</objekttitel></freitexte>')
        L.append(f'      <anhaenge><anhang location="REMOTE" gruppe="BILD"><daten><pfad>https://img.{ag}.example/{r["ext"]}/1.jpg</pfad></daten></anhang></anhaenge>')
        d, mo = r['created'].split(' ')[0].split('/')[:2]
        L.append('      <verwaltung_techn>')
        L.append(f'        <objektnr_extern>{r["ext"]}</objektnr_extern>')
        L.append(f'        <stand_vom>2026-{mo}-{d}</stand_vom>')
        L.append('      </verwaltung_techn>')
        L.append('    </immobilie>')
    L += ['  </anbieter>', '</openimmo>']
    open(path, 'w', encoding='utf-8').write('\n'.join(L) + '\n')

os.makedirs(f'{OUT}/feeds', exist_ok=True)
os.makedirs(f'{OUT}/set', exist_ok=True)
for ag in AGS:
    rs = records[ag]
    rnd.shuffle(rs)
    for d in ('feeds', 'set'):
        path = f'{OUT}/{d}/{ag}.{AG[ag]["ext"]}'
        st = rnd.getstate()
        {'csv': write_csv, 'json': write_json, 'openimmo': write_oi}[AG[ag]['format']](ag, rs, path)
        rnd.setstate(st)  # identical bytes in both folders

with open(f'{OUT}/truth.csv', 'w', newline='', encoding='utf-8') as f:
    w = csv.DictWriter(f, fieldnames=list(truth[0].keys()))
    w.writeheader(); w.writerows(truth)
json.dump([{k: v for k, v in p.items() if k != 'place'} | {'commune': p['place']['commune'], 'locality': p['place']['name']} for p in props],
          open(f'{OUT}/truth_props.json', 'w'), ensure_ascii=False, indent=0)
json.dump({'agencies': [{'source': a, 'format': AG[a]['format']} for a in AGS],
           'listings': [{'source': t['source'], 'external_id': t['external_id'], 'pid': t['pid']} for t in truth]},
          open(f'{OUT}/set/truth.json', 'w'), ensure_ascii=False, indent=0)
print('properties', len(props), 'records', len(truth), {a: len(records[a]) for a in AGS},
      'multi', sum(1 for p in props if len(p['agencies']) > 1))
