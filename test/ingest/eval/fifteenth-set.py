#!/usr/bin/env python3
"""The fifteenth evaluation set (stop 57): written by an outside session that read neither the rule,
nor the other sets' generators, nor the dedup sections of the docs. As it wrote it, but for where it
reads the reference data (the repository's data/).

python3 test/ingest/eval/fifteenth-set.py OUTDIR [SEED]   (default seed 20261201; the set is read with --sets dir:OUTDIR)

World: streets in localities of Luxembourg (localities.csv points), each street with a postcode
(the City's and towns' postcodes name a street; a small village has one postcode for all its
streets; Howald has City-style 2xxx postcodes). Buildings along streets.

Properties (~2,500):
  * ordinary flats, some in buildings of 2-6 sibling flats (stacked: same layout +-0-3 m2,
    price by floor), rent or sale;
  * detached houses;
  * row / semi-detached houses (maisons jumelees / en bande): 2-4 at adjacent numbers 7-12 m
    apart, same area +-0-2 m2, price equal or 1-3 % apart (hard negatives);
  * new-build programmes (VEFA): 8-14 lots in one building (one point), 2-3 layouts, lots of one
    layout within 1 m2, priced off one list (equal on some floors) (hard negatives).
About 700 properties are listed by 2-3 of the five agencies.

Agencies (habits fixed per agency):
  capital-crm (json)  City/centre CRM. EN+FR titles, 25 % name the floor. Net rent, charges in an
                      extra `price.charges` field. Surface habitable to 0.01 m2. bedrooms.
                      Address with street, quarter name as locality (Kirchberg, Bonnevoie, Howald,
                      Belvaux), postcode. Geo at the building (+-5 m).
  sud-immo (csv)      South + City. FR titles. Rents ALWAYS charges comprises (net+charges),
                      rounded to 10; sales to 5,000. Surface PONDEREE: habitable + half the
                      balcony/terrace, to 0.5 m2. Chambres only. Localite as locality,
                      'Luxembourg-Bonnevoie' for City quarters, 30 % upper case. Lat/Lng = the
                      CENTROID OF THE POSTCODE (street's postcode in towns, the village's in
                      villages), every listing.
  nordwohnen (openimmo) North/east/centre. DE titles, 30 % name the floor ('2. OG'). kaltmiete +
                      nebenkosten. Wohnflaeche: half of its flats with a balcony count a quarter
                      of it (WoFlV), to 0.5 m2. anzahl_zimmer the German way: bedrooms + living
                      room, +1 for a study/dining room, +0.5 for an open kitchen on 15 %.
                      ort in German (Luxemburg, Esch an der Alzette, Hesperingen) 60 %, quarter
                      in regionaler_zusatz (Bonneweg 50 % of the time). Geo: building 60 %,
                      the locality's point 30 %, none 10 %.
  luxres (csv)        Everywhere. NO coordinates at all; the street and number always in the
                      title. Net rent; 30 % written '1 850 EUR + 200 EUR charges'. Sales to
                      5,000. Surface whole m2. 25 % of records type the bedrooms in Pieces (and
                      leave Chambres empty), else Chambres. Localite the COMMUNE only on 60 %
                      (Luxembourg for Kirchberg, Hesperange for Howald, Sanem for Belvaux).
  promo-lux (json)    A developer's sales office: programmes and row houses only. Exact list
                      prices, surfaces to 0.01, lot and floor in every title, geo = the building.

Across agencies: 18 % of multi-listed properties were relisted by ONE of their agencies
weeks later (new reference, price cut 2-5 %); the others still show the old price.
"""
import csv, json, math, os, random, sys
from collections import defaultdict

OUT = sys.argv[1]
# habits that can be switched off for attribution runs (RNG draws unchanged): OFF=pond,cc,woflv,study,half,pieces,cut,pcgeo,locgeo,nogeo,communeonly
OFF = set(filter(None, os.environ.get('OFF', '').split(',')))
SEED = int(sys.argv[2]) if len(sys.argv) > 2 else 20261201
rnd = random.Random(SEED)
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../../data')
os.makedirs(OUT, exist_ok=True)

communes = {r['name']: r for r in csv.DictReader(open(f'{DATA}/communes.csv'))}
rents = {r['commune']: r for r in csv.DictReader(open(f'{DATA}/rents.csv')) if r['lau2'] != 'LU'}
quart = {r['quartier']: r for r in csv.DictReader(open(f'{DATA}/rents_luxembourg_city_quartiers.csv'))}
locs = list(csv.DictReader(open(f'{DATA}/localities.csv')))
name_count = defaultdict(int)
for l in locs:
    name_count[l['locality']] += 1


def fnum(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


# ---------- places ----------
REGION_DIGIT = {  # first digit of postcodes per commune (approximate real regions)
    'Luxembourg': None, 'Hesperange': '5', 'Strassen': '8', 'Bertrange': '8', 'Walferdange': '7',
    'Steinsel': '7', 'Niederanven': '6', 'Sandweiler': '5', 'Contern': '5', 'Schuttrange': '5',
    'Kopstal': '8', 'Esch-sur-Alzette': '4', 'Differdange': '4', 'Pétange': '4', 'Sanem': '4',
    'Käerjeng': '4', 'Mondercange': '3', 'Dudelange': '3', 'Bettembourg': '3', 'Kayl': '3',
    'Rumelange': '3', 'Schifflange': '3', 'Roeser': '3', 'Frisange': '5', 'Mamer': '8',
    'Kehlen': '8', 'Steinfort': '8', 'Habscht': '8', 'Dippach': '4', 'Mersch': '7',
    'Lorentzweiler': '7', 'Ettelbruck': '9', 'Diekirch': '9', 'Wiltz': '9', 'Clervaux': '9',
    'Junglinster': '6', 'Echternach': '6', 'Grevenmacher': '6', 'Mertert': '6', 'Remich': '5',
    'Mondorf-les-Bains': '5', 'Schengen': '5', 'Redange/Attert': '8', 'Vianden': '9', 'Parc Hosingen': '9',
    'Wincrange': '9', 'Rambrouch': '8', 'Helperknapp': '7',
}
REGION = {}
for c, r in communes.items():
    cant = r['canton']
    REGION[c] = ('city' if cant == 'Luxembourg' else 'south' if cant in ('Esch-sur-Alzette', 'Capellen')
                 else 'east' if cant in ('Grevenmacher', 'Echternach', 'Remich') else 'north')

USE_COMMUNES = [c for c in REGION_DIGIT]
cweights = [int(communes[c]['population']) for c in USE_COMMUNES]


def commune_localities(c):
    if c == 'Luxembourg':
        return [l for l in locs if l['kind'] == 'quartier_luxembourg_city']
    if c == 'Esch-sur-Alzette':
        return [l for l in locs if l['locality'] in ('Esch-sur-Alzette', 'Belval')]
    return [l for l in locs if l['commune'] == c and l['kind'] == 'locality' and l['lat']
            and name_count[l['locality']] == 1]


def display_quarter(l):
    n = l['locality']
    if '/' in n or n.endswith('-Nord') or n.endswith('-Sud'):
        return l['alt_names'].split(';')[0]
    return n


STREETS = ['Rue de la Gare', "Route d'Arlon", 'Rue Principale', "Rue de l'Église", 'Rue des Jardins',
           'Rue du Moulin', 'Rue de Luxembourg', 'Avenue de la Liberté', 'Rue Dicks', 'Rue Michel Rodange',
           'Rue de Hollerich', 'Rue de Bonnevoie', 'Rue Pierre Krier', 'Rue Zithe', 'Rue de Strasbourg',
           'Rue des Prés', 'Rue du Cimetière', 'Rue de la Forêt', 'Rue des Champs', 'Rue du Parc',
           'Rue Jean-Pierre Brasseur', 'Rue de Trèves', 'Rue Belle-Vue', 'Rue de la Libération',
           'Rue Nicolas Margue', 'Rue des Sapins', 'Rue de la Chapelle', 'Rue du Fort Elisabeth',
           'Rue Victor Hugo', 'Rue de Mamer', 'Rue des Romains', 'Rue de Hesperange', 'Rue Auguste Charles',
           'Rue Émile Mayrisch', 'Rue de Kayl', 'Rue du Brill', 'Rue de Neudorf', 'Rue Jules Wilhelm',
           'Boulevard Konrad Adenauer', 'Rue Alphonse Weicker', 'Avenue J.F. Kennedy', 'Rue de Beggen',
           'Rue des Aubépines', 'Rue Tony Neuman', 'Rue de Merl', 'Rue de Cessange', 'Rue de Gasperich',
           'Rue du Kiem', 'Rue des Vergers', 'Rue des Écoles', 'Um Bierg', 'Am Duerf', 'Op der Heed',
           'Rue de Schifflange', 'Rue de Soleuvre', 'Rue de Belvaux', 'Rue des Alliés', 'Rue du Canal']

used_pc = set()


def new_pc(digit):
    while True:
        if digit is None:
            p = rnd.randint(1009, 2999)
        else:
            p = int(digit) * 1000 + rnd.randint(10, 999)
        if p not in used_pc:
            used_pc.add(p)
            return p


M_LAT = 111_200.0


def offset(lat, lng, dx, dy):
    return lat + dy / M_LAT, lng + dx / (M_LAT * math.cos(math.radians(lat)))


def dist(a, b):
    dy = (a[0] - b[0]) * M_LAT
    dx = (a[1] - b[1]) * M_LAT * math.cos(math.radians(a[0]))
    return math.hypot(dx, dy)


class Loc:
    def __init__(self, row, commune):
        self.row = row
        self.commune = commune
        self.name = row['locality']
        self.display = display_quarter(row) if commune == 'Luxembourg' else row['locality']
        self.pt = (float(row['lat']), float(row['lng']))
        self.town = commune == 'Luxembourg' or row['locality'] == commune and int(communes[commune]['population']) > 9000 \
            or row['locality'] in ('Howald', 'Belvaux', 'Belval', 'Niederkorn', 'Soleuvre', 'Bereldange')
        digit = REGION_DIGIT.get(commune, '9')
        if row['locality'] == 'Howald':
            digit = '2'
        self.digit = digit
        self.village_pc = None if self.town else new_pc(digit)
        self.streets = []
        n = 10 if self.town else 4
        names = rnd.sample(STREETS, n)
        for nm in names:
            r = rnd.uniform(150, 900) if self.town else rnd.uniform(60, 450)
            a = rnd.uniform(0, 2 * math.pi)
            mid = offset(*self.pt, r * math.cos(a), r * math.sin(a))
            self.streets.append({'name': nm, 'mid': mid, 'dir': rnd.uniform(0, math.pi), 'len': rnd.uniform(150, 500),
                                 'pc': self.village_pc if self.village_pc else new_pc(digit), 'next_no': rnd.randint(1, 15), 'loc': self})


LOCS = {}


def pick_loc():
    c = rnd.choices(USE_COMMUNES, cweights)[0]
    cands = commune_localities(c)
    if not cands:
        return None
    w = [5 if l['locality'] == c else (1 if c != 'Luxembourg' else 1) for l in cands]
    row = rnd.choices(cands, w)[0]
    key = (c, row['locality'])
    if key not in LOCS:
        LOCS[key] = Loc(row, c)
    return LOCS[key]


def new_building(loc, span=1):
    st = rnd.choice(loc.streets)
    no = st['next_no']
    st['next_no'] += span * rnd.choice([2, 2, 4])
    t = rnd.uniform(-0.5, 0.5) * st['len']
    lat, lng = offset(*st['mid'], t * math.cos(st['dir']), t * math.sin(st['dir']))
    return {'street': st, 'no': no, 'pt': (lat, lng), 'loc': loc}


def row_neighbour(b, k):
    st = b['street']
    d = rnd.uniform(7, 12) * k
    lat, lng = offset(*b['pt'], d * math.cos(st['dir']), d * math.sin(st['dir']))
    return {'street': st, 'no': b['no'] + 2 * k, 'pt': (lat, lng), 'loc': b['loc']}


def eur_m2(loc, kind, offer):
    c = loc.commune
    r = rents.get(c, {})
    q = quart.get(loc.name) if c == 'Luxembourg' else None
    if offer == 'rent':
        v = fnum(q['apt_rent_avg_eur_m2_month']) if q else None
        v = v or fnum(r.get('apt_rent_avg_eur_m2_month')) or 30.0
        if kind == 'house':
            v = fnum(r.get('house_rent_avg_eur_m2_month')) or 19.5
        return v * rnd.uniform(0.85, 1.15)
    if kind == 'house':
        v = (fnum(q['house_sale_advertised_avg_eur_m2']) if q else None) or fnum(r.get('house_sale_advertised_avg_eur_m2')) or 6054
    else:
        v = (fnum(q['apt_sale_advertised_avg_eur_m2']) if q else None) or fnum(r.get('apt_sale_advertised_avg_eur_m2')) or 8000
    return v * rnd.uniform(0.85, 1.15)


PROPS = []


def add_prop(**kw):
    kw['pid'] = f'P{len(PROPS) + 1:05d}'
    PROPS.append(kw)
    return kw


def flat_layout():
    bed = rnd.choices([0, 1, 2, 3, 4], [8, 35, 38, 15, 4])[0]
    area = {0: rnd.uniform(28, 42), 1: rnd.uniform(45, 65), 2: rnd.uniform(68, 95), 3: rnd.uniform(95, 130), 4: rnd.uniform(125, 170)}[bed]
    return bed, round(area, 2)


def extras(kind):
    balcony = round(rnd.uniform(4, 22), 1) if rnd.random() < (0.65 if kind == 'flat' else 0.5) else 0.0
    if kind == 'house':
        balcony = round(rnd.uniform(10, 40), 1) if balcony else 0.0
    return {'balcony': balcony, 'study': rnd.random() < 0.15, 'open_kitchen': rnd.random() < 0.15}


def price_of(loc, kind, offer, area):
    p = area * eur_m2(loc, kind, offer)
    return int(round(p, -1)) if offer == 'rent' else int(round(p, -3))


def charges_of(kind, area):
    if kind == 'house':
        return int(round(rnd.uniform(0, 150), -1))
    return int(round(80 + area * rnd.uniform(1.5, 3.0), -1))


N_TARGET = 2500
# --- new-build programmes
PROG_NAMES = ['Les Jardins d\'Alice', 'Résidence Belle-Vue', 'Domaine du Parc', 'Résidence Émeraude', 'Les Terrasses du Kiem',
              'Résidence Horizon', 'Le Clos des Vignes', 'Résidence Saphir', 'Les Hauts de Merl', 'Résidence Lumière',
              'Green Park', 'Résidence Opale', 'Le Carré', 'Résidence Améthyste', 'Les Portes du Sud', 'Résidence Orée',
              'Villa Rosa', 'Résidence Cèdre', 'Les Allées', 'Résidence Mosaïque', 'Résidence Zénith', 'Le Belvédère',
              'Résidence Iris', 'Les Coteaux', 'Résidence Nova', 'Résidence Aurore', 'Les Tilleuls', 'Résidence Alba',
              'Résidence Quartz', 'Le Panorama', 'Résidence Flora', 'Résidence Ginkgo', 'Les Érables', 'Résidence Onyx',
              'Résidence Lilas']
for pi, pname in enumerate(PROG_NAMES):
    loc = None
    while loc is None:
        loc = pick_loc()
    b = new_building(loc)
    m2 = eur_m2(loc, 'flat', 'sale') * 1.12
    layouts = rnd.sample([0, 1, 1, 2, 2, 3], rnd.choice([2, 3]))
    lots = rnd.randint(8, 14)
    base = {bed: flat_layout_area for bed, flat_layout_area in [(x, {0: 38, 1: rnd.uniform(48, 58), 2: rnd.uniform(72, 90), 3: rnd.uniform(98, 118)}[x]) for x in set(layouts)]}
    same_price = rnd.random() < 0.5
    for li in range(lots):
        bed = layouts[li % len(layouts)]
        floor = li // len(layouts)
        area = round(base[bed] + rnd.uniform(-0.6, 0.6), 2)
        fac = 1.0 if (same_price and 1 <= floor <= 3) else 1 + 0.012 * floor
        price = int(round(base[bed] * m2 * fac, -2)) if same_price else int(round(area * m2 * fac, -2))
        balcony = round(rnd.uniform(6, 14), 1)
        lot = f'{chr(65 + floor)}{li + 1:02d}'
        add_prop(kind='flat', offer='sale', loc=loc, bld=b, bed=bed, area=area, floor=floor, price=price, charges=0,
                 balcony=balcony, study=False, open_kitchen=rnd.random() < 0.3, prog=pname, lot=lot, group=f'prog{pi}')
# --- row / semi-detached houses
for ri in range(60):
    loc = None
    while loc is None:
        loc = pick_loc()
    k = rnd.choices([2, 3, 4], [6, 3, 2])[0]
    b0 = new_building(loc, span=k)
    bed = rnd.choice([3, 3, 4, 4, 5])
    area0 = rnd.uniform(130, 190)
    offer = 'sale' if rnd.random() < 0.8 else 'rent'
    p0 = price_of(loc, 'house', offer, area0)
    bal = round(rnd.uniform(10, 30), 1)
    prom = rnd.random() < 0.6  # a developer's new row
    for j in range(k):
        b = b0 if j == 0 else row_neighbour(b0, j)
        area = round(area0 + rnd.choice([0, 0, rnd.uniform(-2, 2)]), 2)
        price = p0 if rnd.random() < 0.5 else int(round(p0 * rnd.uniform(0.97, 1.03), -3 if offer == 'sale' else -1))
        add_prop(kind='house', offer=offer, loc=loc, bld=b, bed=bed, area=area, floor=None, price=price,
                 charges=charges_of('house', area), balcony=bal, study=rnd.random() < 0.3, open_kitchen=False,
                 prog=('Maisons ' + b0['street']['name'].replace('Rue ', '')) if prom else None, lot=f'M{j + 1}' if prom else None,
                 group=f'row{ri}', jumelee=True)
# --- ordinary flats and houses
while len(PROPS) < N_TARGET:
    loc = pick_loc()
    if loc is None:
        continue
    if rnd.random() < 0.72:
        k = rnd.choices([1, 2, 3, 4, 6], [55, 18, 12, 8, 7])[0]
        b = new_building(loc)
        bed, area = flat_layout()
        offer = 'rent' if rnd.random() < 0.5 else 'sale'
        gid = f'bld{len(PROPS)}'
        floors = rnd.sample(range(0, 7), k)
        for f in floors:
            a = round(area + (0 if rnd.random() < 0.4 else rnd.uniform(-3, 3)), 2) if k > 1 else area
            bd = bed if rnd.random() < 0.8 else max(0, bed + rnd.choice([-1, 1]))
            of = offer if rnd.random() < 0.8 else ('sale' if offer == 'rent' else 'rent')
            p = price_of(loc, 'flat', of, a)
            e = extras('flat')
            add_prop(kind='flat', offer=of, loc=loc, bld=b, bed=bd, area=a, floor=f, price=p, charges=charges_of('flat', a),
                     prog=None, lot=None, group=gid, **e)
    else:
        b = new_building(loc)
        bed = rnd.choice([3, 3, 4, 4, 5])
        area = round(rnd.uniform(120, 260), 2)
        offer = 'sale' if rnd.random() < 0.8 else 'rent'
        add_prop(kind='house', offer=offer, loc=loc, bld=b, bed=bed, area=area, floor=None, price=price_of(loc, 'house', offer, area),
                 charges=charges_of('house', area), prog=None, lot=None, group=None, **extras('house'))

# ---------- postcode centroids: mean of the street midpoints bearing the postcode
pc_pts = defaultdict(list)
for l in LOCS.values():
    for st in l.streets:
        pc_pts[st['pc']].append(st['mid'])
PC_CENTROID = {pc: (sum(p[0] for p in v) / len(v), sum(p[1] for p in v) / len(v)) for pc, v in pc_pts.items()}

# ---------- who lists what
AG = ['capital-crm', 'sud-immo', 'nordwohnen', 'luxres', 'promo-lux']
FORMAT = {'capital-crm': 'json', 'sud-immo': 'csv', 'nordwohnen': 'openimmo', 'luxres': 'csv', 'promo-lux': 'json'}
COVER = {'capital-crm': {'city': 5, 'south': 1, 'east': 1, 'north': 0.5},
         'sud-immo': {'city': 2, 'south': 5, 'east': 0.3, 'north': 0.2},
         'nordwohnen': {'city': 2, 'south': 0.5, 'east': 3, 'north': 5},
         'luxres': {'city': 4, 'south': 2, 'east': 2, 'north': 1}}
RESALE = ['capital-crm', 'sud-immo', 'nordwohnen', 'luxres']


def pick_agencies(p, n, exclude=()):
    reg = REGION[p['loc'].commune]
    cands = [a for a in RESALE if a not in exclude]
    out = []
    for _ in range(n):
        w = [COVER[a][reg] for a in cands]
        a = rnd.choices(cands, w)[0]
        out.append(a)
        cands.remove(a)
    return out


MULTI = 700
for p in PROPS:
    if p['prog']:
        p['agencies'] = ['promo-lux']
    else:
        p['agencies'] = pick_agencies(p, 1)
progs = [p for p in PROPS if p['prog']]
n_multi = 0
for p in rnd.sample(progs, int(len(progs) * 0.35)):
    p['agencies'] += pick_agencies(p, rnd.choice([1, 1, 2]))
    n_multi += 1
others = [p for p in PROPS if not p['prog']]
rnd.shuffle(others)
for p in others:
    if n_multi >= MULTI:
        break
    p['agencies'] = pick_agencies(p, rnd.choices([2, 3], [70, 30])[0])
    n_multi += 1
# relists: one agency's listing of 18 % of multi-listed properties, price cut 2-5 %
for p in PROPS:
    p['cut'] = None
    if len(p['agencies']) > 1 and rnd.random() < 0.18:
        p['cut'] = (rnd.choice(p['agencies']), rnd.uniform(0.02, 0.05))
        if 'cut' in OFF:
            p['cut'] = None

# ---------- render
FLOOR_FR = lambda f: 'rez-de-chaussée' if f == 0 else ('1er étage' if f == 1 else f'{f}e étage')
FLOOR_EN = lambda f: 'ground floor' if f == 0 else f"{f}{'st' if f == 1 else 'nd' if f == 2 else 'rd' if f == 3 else 'th'} floor"
FLOOR_DE = lambda f: 'EG' if f == 0 else f'{f}. OG'
NUM_EN = ['Studio', 'One-bedroom', 'Two-bedroom', 'Three-bedroom', 'Four-bedroom']


def dstr(day):
    return f'2026-{10 + day // 30:02d}-{1 + day % 30:02d}'


recs = defaultdict(list)
META = []
truth = []
seq = defaultdict(int)


def price_for(p, ag, base):
    if p['cut'] and p['cut'][0] == ag:
        return base * (1 - p['cut'][1]), True
    return base, False


def jit(pt, m):
    a = rnd.uniform(0, 2 * math.pi)
    r = rnd.uniform(0, m)
    return offset(*pt, r * math.cos(a), r * math.sin(a))


for p in PROPS:
    loc = p['loc']
    st = p['bld']['street']
    for ag in p['agencies']:
        seq[ag] += 1
        net, relisted = price_for(p, ag, p['price'])
        day = rnd.randint(0, 40) + (14 if relisted else 0)
        r = {'p': p, 'relisted': relisted, 'day': min(day, 59)}
        kind_fr = 'Maison jumelée' if p.get('jumelee') else ('Maison' if p['kind'] == 'house' else ('Studio' if p['bed'] == 0 else 'Appartement'))
        if ag == 'capital-crm':
            r['ref'] = f'CAP-{20000 + seq[ag] * 7 + (500 if relisted else 0)}'
            price = round(net, -1) if p['offer'] == 'rent' and rnd.random() < 0.5 else (round(net) if p['offer'] == 'rent' else round(net, -3))
            fl = p['floor'] if p['kind'] == 'flat' and p['floor'] is not None and rnd.random() < 0.25 else None
            en = f"{NUM_EN[min(p['bed'], 4)] + (' flat' if p['bed'] else '') if p['kind'] == 'flat' else ('Semi-detached house' if p.get('jumelee') else 'House') + ' with ' + str(p['bed']) + ' bedrooms'} in {loc.display}"
            fr = f"{kind_fr} {p['bed']} chambres à {loc.display}" if p['bed'] else f'Studio à {loc.display}'
            if fl is not None:
                en += f", {FLOOR_EN(fl)}"
                fr += f", {FLOOR_FR(fl)}"
            r.update(title={'en': en, 'fr': fr}, price=int(price), charges=p['charges'] if p['offer'] == 'rent' and rnd.random() < 0.7 else None,
                     area=p['area'], bed=p['bed'], street=f"{p['bld']['no']}, {st['name']}", locality=loc.display,
                     postcode=f"L-{st['pc']}", geo=jit(p['bld']['pt'], 5))
        elif ag == 'sud-immo':
            r['ref'] = f'SI-{4000 + seq[ag] + (9000 if relisted else 0)}'
            if p['offer'] == 'rent':
                price = round(net + (0 if 'cc' in OFF else p['charges']), -1)
            else:
                price = round(net, -4) / 1 if False else round(net / 5000) * 5000
            area = p['area'] + (0 if 'pond' in OFF else 0.5 * p['balcony'])
            area = round(area * 2) / 2
            title = f"{kind_fr} {p['bed']} chambres" if p['bed'] else 'Studio'
            if p['balcony'] and p['kind'] == 'flat':
                title += rnd.choice([' avec balcon', ' avec terrasse', ''])
            if p['kind'] == 'flat' and p['floor'] is not None and rnd.random() < 0.2:
                title += f" au {FLOOR_FR(p['floor'])}"
            title += f' - {loc.display}'
            if p['offer'] == 'rent' and rnd.random() < 0.5:
                title += rnd.choice([' (charges comprises)', ' CC'])
            if loc.commune == 'Luxembourg':
                lt = f'Luxembourg-{loc.display}'
            else:
                lt = loc.display
            if rnd.random() < 0.3:
                lt = lt.upper()
            c = PC_CENTROID[st['pc']] if 'pcgeo' not in OFF else p['bld']['pt']
            r.update(title=title, price=int(price), area=area, bed=p['bed'], locality=lt,
                     postcode=rnd.choice([f"L-{st['pc']}", str(st['pc'])]), geo=(round(c[0], 5), round(c[1], 5)))
        elif ag == 'nordwohnen':
            r['ref'] = f'NW-2026-{1000 + seq[ag] + (5000 if relisted else 0):04d}'
            area = p['area']
            if p['kind'] == 'flat' and p['balcony'] and rnd.random() < 0.5 and 'woflv' not in OFF:
                area += 0.25 * p['balcony']
            area = round(area * 2) / 2
            zim = p['bed'] + 1 + (1 if p['study'] and 'study' not in OFF else 0) + (0.5 if p['open_kitchen'] and rnd.random() < 0.5 and 'half' not in OFF else 0)
            zs = f'{zim:g}'
            if p['kind'] == 'flat':
                title = f"{zs}-Zimmer-Wohnung" if p['bed'] else '1-Zimmer-Appartement'
                title += rnd.choice([' mit Balkon', '', ' in ruhiger Lage'])
            else:
                title = ('Doppelhaushälfte' if p.get('jumelee') else 'Einfamilienhaus') + f" mit {p['bed']} Schlafzimmern"
            cde = communes[loc.commune]['name_de']
            ort = cde if rnd.random() < 0.6 else loc.commune
            zus = None
            if loc.name != loc.commune:
                zus = loc.display
                alts = [a for a in loc.row['alt_names'].split(';') if a]
                if loc.commune == 'Luxembourg' and alts and rnd.random() < 0.5:
                    zus = alts[-1]
            title += f" in {ort}" + (f'-{zus}' if zus else '')
            if p['kind'] == 'flat' and p['floor'] is not None and rnd.random() < 0.3:
                title += f", {FLOOR_DE(p['floor'])}"
            u = rnd.random()
            geo = jit(p['bld']['pt'], 8) if u < 0.6 else (loc.pt if u < 0.9 else None)
            if 'locgeo' in OFF and u >= 0.6:
                geo = p['bld']['pt']
            r.update(title=title, price=(round(net) if p['offer'] == 'rent' else round(net, -3)),
                     charges=p['charges'] if p['offer'] == 'rent' else None, area=area, zimmer=zs, ort=ort, zusatz=zus,
                     plz=rnd.choice([f"L-{st['pc']}", str(st['pc'])]), geo=geo)
        elif ag == 'luxres':
            r['ref'] = f'LR{70000 + seq[ag] * 3 + (1 if relisted else 0)}'
            title = f"{kind_fr} {p['bed']} ch." if p['bed'] else 'Studio'
            title += f" – {p['bld']['no']}, {st['name'].lower() if rnd.random() < 0.5 else st['name']}"
            if rnd.random() < 0.5:
                title += f", {loc.display}"
            area = round(p['area'])
            if p['offer'] == 'rent':
                price_txt = f"{int(round(net)):,}".replace(',', ' ') + ' €'
                if rnd.random() < 0.3:
                    price_txt += f" + {p['charges']} € charges"
            else:
                price_txt = f"€ {int(round(net / 5000) * 5000):,}".replace(',', ' ')
            bedspec = ('pieces', p['bed']) if rnd.random() < 0.25 and 'pieces' not in OFF else ('chambres', p['bed'])
            lt = loc.commune if rnd.random() < 0.6 and 'communeonly' not in OFF else loc.display
            r.update(title=title, price_txt=price_txt, area=area, bedspec=bedspec, locality=lt, postcode=f"L-{st['pc']}", geo=p['bld']['pt'] if 'nogeo' in OFF else None)
        elif ag == 'promo-lux':
            r['ref'] = f"PL-{p['group']}-{p['lot']}"
            if p['kind'] == 'flat':
                fr = f"{p['prog']} – Lot {p['lot']} – " + (f"appartement {p['bed']} chambres" if p['bed'] else 'studio') + f" au {FLOOR_FR(p['floor'])}, {loc.display}"
                en = f"{p['prog']} – Lot {p['lot']} – {NUM_EN[p['bed']]}{' apartment' if p['bed'] else ''}, {FLOOR_EN(p['floor'])}, {loc.display}"
            else:
                fr = f"{p['prog']} – Lot {p['lot']} – maison jumelée {p['bed']} chambres, {loc.display}"
                en = f"{p['prog']} – Lot {p['lot']} – semi-detached house, {p['bed']} bedrooms, {loc.display}"
            r.update(title={'fr': fr, 'en': en}, price=int(round(net)), area=p['area'], bed=p['bed'], street=f"{p['bld']['no']}, {st['name']}",
                     locality=loc.display, postcode=f"L-{st['pc']}", geo=p['bld']['pt'])
        recs[ag].append(r)
        META.append({'source': ag, 'ref': r['ref'], 'pid': p['pid'], 'relisted': relisted, 'area': r.get('area'), 'geo': r.get('geo'), 'zimmer': r.get('zimmer'), 'bedspec': r.get('bedspec'), 'price': r.get('price'), 'price_txt': r.get('price_txt'), 'charges': r.get('charges')})
        truth.append({'source': ag, 'external_id': r['ref'], 'pid': p['pid']})


def write_json(ag, name):
    L = []
    for r in recs[ag]:
        p = r['p']
        pr = {'amount': r['price'], 'currency': 'EUR', 'period': 'month' if p['offer'] == 'rent' else None}
        if pr['period'] is None:
            del pr['period']
        if r.get('charges'):
            pr['charges'] = r['charges']
        L.append({'ref': r['ref'], 'offer': p['offer'], 'status': 'available', 'title': r['title'], 'price': pr,
                  'surface_m2': r['area'], 'bedrooms': r['bed'],
                  'address': {'street': r['street'], 'locality': r['locality'], 'postcode': r['postcode'], 'country': 'LU'},
                  'geo': {'lat': round(r['geo'][0], 6), 'lon': round(r['geo'][1], 6)} if r['geo'] else None,
                  'media': [{'type': 'photo', 'url': f"https://cdn.{ag}.example/{r['ref']}/1.jpg"}], 'students': False,
                  'published_at': dstr(r['day']) + 'T08:00:00Z', 'link': f"https://{ag}.example/l/{r['ref']}"})
    json.dump({'agency': name, 'generated_at': '2026-11-30T06:00:00+01:00', 'mode': 'full', 'listings': L},
              open(f'{OUT}/{ag}.json', 'w'), ensure_ascii=False, indent=1)


def fr_num(x):
    return f'{x:g}'.replace('.', ',')


def write_csv(ag):
    H = "Référence;Type d'offre;Type de bien;Titre;Prix;Surface;Pièces;Chambres;Localité;Code postal;Latitude;Longitude;Photos;Étudiants;Date de création;Lien"
    rows = [H]
    for r in recs[ag]:
        p = r['p']
        typ = 'Location' if p['offer'] == 'rent' else 'Vente'
        if ag == 'sud-immo':
            typ = typ.upper() if rnd.random() < 0.3 else typ
            pt = f"{r['price']:,}".replace(',', '.') + (' €' if rnd.random() < 0.5 else '')
            surf = fr_num(r['area']) + ' m²'
            pieces, ch = '', str(r['bed'])
            lat, lng = fr_num(r['geo'][0]), fr_num(r['geo'][1])
        else:
            pt = r['price_txt']
            surf = str(r['area'])
            pieces, ch = (str(r['bedspec'][1]), '') if r['bedspec'][0] == 'pieces' else ('', str(r['bedspec'][1]))
            lat, lng = (f"{r['geo'][0]:.5f}", f"{r['geo'][1]:.5f}") if r['geo'] else ('', '')
        kind = 'Maison' if p['kind'] == 'house' else 'Appartement'
        d = dstr(r['day'])
        date = f'{d[8:10]}/{d[5:7]}/2026 {rnd.randint(8, 18):02d}:{rnd.randint(0, 59):02d}'
        cells = [r['ref'], typ, kind, r['title'], pt, surf, pieces, ch, r['locality'], r['postcode'], lat, lng,
                 f"https://photos.{ag}.example/{r['ref']}.jpg", 'non', date, f"https://www.{ag}.example/biens/{r['ref']}"]
        rows.append(';'.join('"' + c.replace('"', '""') + '"' if (';' in c or '"' in c or ' ' in c) else c for c in cells))
    open(f'{OUT}/{ag}.csv', 'w', encoding='utf-8').write('\ufeff' + '\n'.join(rows) + '\n')


def x(s):
    return str(s).replace('&', '&amp;').replace('<', '&lt;').replace('>', '&gt;').replace('"', '&quot;')


def write_openimmo(ag):
    o = ['<?xml version="1.0" encoding="UTF-8"?>', '<openimmo>',
         '<uebertragung art="OFFLINE" umfang="VOLL" modus="NEW" version="1.2.7" sendersoftware="FlowFact"/>', '<anbieter>',
         '<anbieternr>NW-01</anbieternr><firma>Nord Wohnen S.à r.l.</firma>']
    for r in recs[ag]:
        p = r['p']
        art = '<wohnung wohnungtyp="ETAGE"/>' if p['kind'] == 'flat' else '<haus haustyp="DOPPELHAUSHAELFTE"/>' if p.get('jumelee') else '<haus haustyp="EINFAMILIENHAUS"/>'
        rent = p['offer'] == 'rent'
        geo = f'<geokoordinaten breitengrad="{r["geo"][0]:.5f}" laengengrad="{r["geo"][1]:.5f}"/>' if r['geo'] else ''
        zus = f'<regionaler_zusatz>{x(r["zusatz"])}</regionaler_zusatz>' if r['zusatz'] else ''
        if rent:
            pr = f'<kaltmiete>{r["price"]:.2f}</kaltmiete>' + (f'<nebenkosten>{r["charges"]:.2f}</nebenkosten>' if r['charges'] else '')
        else:
            pr = f'<kaufpreis>{r["price"]}</kaufpreis>'
        o.append(f'''<immobilie>
<objektkategorie><nutzungsart WOHNEN="true" GEWERBE="false"/><vermarktungsart KAUF="{str(not rent).lower()}" MIETE_PACHT="{str(rent).lower()}"/><objektart>{art}</objektart></objektkategorie>
<geo><plz>{r["plz"]}</plz><ort>{x(r["ort"])}</ort>{zus}{geo}<land iso_land="LUX"/></geo>
<preise>{pr}<waehrung iso_waehrung="EUR"/></preise>
<flaechen><wohnflaeche>{r["area"]:.2f}</wohnflaeche><anzahl_zimmer>{r["zimmer"]}</anzahl_zimmer></flaechen>
<freitexte><objekttitel>{x(r["title"])}</objekttitel></freitexte>
<anhaenge><anhang location="REMOTE" gruppe="BILD"><daten><pfad>https://img.nordwohnen.example/{r["ref"]}/1.jpg</pfad></daten></anhang></anhaenge>
<verwaltung_techn><objektnr_extern>{r["ref"]}</objektnr_extern><aktion aktionart="CHANGE"/><stand_vom>{dstr(r["day"])}</stand_vom></verwaltung_techn>
</immobilie>''')
    o += ['</anbieter>', '</openimmo>']
    open(f'{OUT}/{ag}.openimmo.xml', 'w').write('\n'.join(o) + '\n')


for a in recs:
    rnd.shuffle(recs[a])
write_json('capital-crm', 'Immo Capitale')
write_json('promo-lux', 'Promo Lux Développement')
write_csv('sud-immo')
write_csv('luxres')
write_openimmo('nordwohnen')
json.dump({'agencies': [{'source': a, 'format': FORMAT[a]} for a in AG], 'listings': truth}, open(f'{OUT}/truth.json', 'w'), indent=0)
# side file (not read by the runner): each property's true attributes, for the analysis
side = []
for p in PROPS:
    side.append({k: (v if not isinstance(v, (Loc, dict)) else None) for k, v in p.items() if k not in ('loc', 'bld')} |
                {'commune': p['loc'].commune, 'locality': p['loc'].display, 'street': p['bld']['street']['name'], 'no': p['bld']['no'],
                 'pc': p['bld']['street']['pc'], 'lat': p['bld']['pt'][0], 'lng': p['bld']['pt'][1], 'village_pc': p['loc'].village_pc is not None})
json.dump(side, open(os.path.join(os.path.dirname(OUT.rstrip('/')) or '.', os.path.basename(OUT.rstrip('/')) + '.props.json'), 'w'))
json.dump(META, open(os.path.join(os.path.dirname(OUT.rstrip('/')) or '.', os.path.basename(OUT.rstrip('/')) + '.meta.json'), 'w'))
n = len(PROPS)
ml = sum(1 for p in PROPS if len(p['agencies']) > 1)
print(f'{n} properties, {ml} multi-listed ({sum(1 for p in PROPS if len(p["agencies"]) == 3)} by three), {len(truth)} listings; '
      + ', '.join(f'{a}: {len(recs[a])}' for a in AG) + f"; relisted-with-cut: {sum(1 for p in PROPS if p['cut'])}")
