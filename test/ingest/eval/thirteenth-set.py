#!/usr/bin/env python3
"""The thirteenth evaluation set of deduplication: written by an outside session of stop 56 (its
generator, kept as it wrote it, in Python), from its own description of the noise, without reading the
project's rule or generators. 1,500 properties, 400 of them listed by two or three of three agencies
(OpenImmo XML, CSV, JSON); hard negatives: twin flats of one building (titles naming their floors),
look-alikes of one commune, two flats of one building listed by one agency, studios of 19 and 20 m2,
a flat let and sold. Its noise is described in docs/feed-operators.md ("Floors").
Writes OUT/probe-nord.xml, OUT/probe-moselle.csv, OUT/probe-capital.json, OUT/truth.jsonl and
OUT/truth.json (the folder set format of folder-set.ts: `npx tsx test/ingest/eval/run.ts --sets dir:OUT`).
Usage: python3 test/ingest/eval/thirteenth-set.py [seed=7] [outdir] [reference data folder=data/ of the repository]"""
import csv, json, math, random, sys, os, unicodedata
from xml.sax.saxutils import escape
SEED = int(sys.argv[1]) if len(sys.argv) > 1 else 7
OUT = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(os.path.abspath(__file__)), 'out')
os.makedirs(OUT, exist_ok=True)
R = random.Random(SEED)
D = sys.argv[3] if len(sys.argv) > 3 else os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../../data')
communes = {r['name']: r for r in csv.DictReader(open(f'{D}/communes.csv', encoding='utf-8'))}
rents = {r['commune']: r for r in csv.DictReader(open(f'{D}/rents.csv', encoding='utf-8'))}
locs = [r for r in csv.DictReader(open(f'{D}/localities.csv', encoding='utf-8')) if r['lat']]

def strip_acc(s): return ''.join(c for c in unicodedata.normalize('NFD', s) if unicodedata.category(c) != 'Mn')
def fnum(x, d=None):
    try: return float(x)
    except: return d

# ---- places: (commune, locality, lat, lng, alt names)
places = []
for l in locs:
    c = communes.get(l['commune'])
    if not c: continue
    pop = float(c['population'] or 1000)
    nloc = sum(1 for x in locs if x['commune'] == l['commune'])
    w = pop / nloc
    if l['kind'] == 'quartier_luxembourg_city': w = 130000 / 24 * 1.3
    if l['commune'] == 'Luxembourg' and l['kind'] == 'locality': continue
    if l['kind'] == 'quartier_esch': w = 37000 / 18
    if l['commune'] == 'Esch-sur-Alzette' and l['kind'] == 'locality': continue
    places.append(dict(commune=l['commune'], loc=l['locality'], lat=float(l['lat']), lng=float(l['lng']),
                       alt=[a for a in l['alt_names'].split(';') if a], kind=l['kind'], w=w, canton=c['canton']))
PW = [p['w'] for p in places]

CANTON_PC = {'Luxembourg': 7000, 'Esch-sur-Alzette': 3000, 'Capellen': 8000, 'Clervaux': 9700, 'Wiltz': 9500,
             'Vianden': 9400, 'Diekirch': 9200, 'Echternach': 6400, 'Grevenmacher': 6700, 'Mersch': 7500,
             'Redange': 8500, 'Remich': 5400}
def commune_pc(commune, canton):
    if commune == 'Luxembourg': return 1000
    h = sum(ord(c) for c in commune)
    return CANTON_PC.get(canton, 8000) + (h % 30) * 5 if commune != 'Esch-sur-Alzette' else 4001

def offset(lat, lng, meters, ang=None):
    ang = R.uniform(0, 2 * math.pi) if ang is None else ang
    dlat = meters * math.cos(ang) / 111320
    dlng = meters * math.sin(ang) / (111320 * math.cos(math.radians(lat)))
    return lat + dlat, lng + dlng

STREETS = ['Rue de la Gare', 'Rue Principale', 'Avenue de la Liberté', 'Rue des Prés', 'Route d\'Arlon', 'Rue de Hollerich',
           'Rue du Fort', 'Rue de l\'Église', 'Rue des Jardins', 'Rue du Moulin', 'Boulevard Royal', 'Rue Michel Rodange',
           'Rue de Luxembourg', 'Rue des Champs', 'Rue du Parc', 'Rue de la Montagne', 'Rue Victor Hugo', 'Rue de Neudorf']
bcount = 0
def new_building(place=None, near=None, dist=None):
    global bcount
    bcount += 1
    p = place or R.choices(places, PW)[0]
    city = p['commune'] in ('Luxembourg', 'Esch-sur-Alzette')
    if near is not None:
        lat, lng = offset(near['lat'], near['lng'], dist)
    else:
        lat, lng = offset(p['lat'], p['lng'], R.uniform(0, 500 if city else 700))
    si = R.randrange(len(STREETS))
    return dict(id=f'B{bcount:05d}', place=p, lat=lat, lng=lng, street=STREETS[si], no=R.randint(1, 180),
                pc=commune_pc(p['commune'], p['canton']) + si % 9 + (R.randrange(3) if city else 0) * 10)

def rent_m2(commune, house=False):
    r = rents.get(commune, {})
    return fnum(r.get('apt_rent_avg_eur_month') and r.get('apt_rent_avg_eur_m2_month'), None) or 27.0
def sale_m2(commune):
    r = rents.get(commune, {})
    return fnum(r.get('apt_sale_advertised_avg_eur_m2'), None) or fnum(r.get('house_sale_advertised_avg_eur_m2'), None) or 7500.0

props = []
def new_prop(building, ltype=None, kind=None, area=None, beds=None, floor=None, price=None, tag='normal', pid=None):
    ltype = ltype or ('RENT' if R.random() < 0.72 else 'SALE')
    kind = kind or R.choices(['studio', 'flat', 'house'], [0.15, 0.7, 0.15])[0]
    if beds is None:
        beds = 0 if kind == 'studio' else (R.choice([1, 1, 2, 2, 2, 3]) if kind == 'flat' else R.choice([3, 3, 4, 5]))
    if area is None:
        area = round({'studio': R.uniform(22, 40), 'flat': 35 + beds * R.uniform(20, 30), 'house': 90 + beds * R.uniform(20, 35)}[kind], 2)
    rooms = beds + 1 if (kind == 'studio' or R.random() < 0.88) else beds + 2
    c = building['place']['commune']
    if price is None:
        if ltype == 'RENT': price = area * rent_m2(c) * R.uniform(0.85, 1.15) * (0.8 if kind == 'house' else 1)
        else: price = area * sale_m2(c) * R.uniform(0.85, 1.15)
    p = dict(pid=pid or f'P{len(props)+1:05d}', b=building, ltype=ltype, kind=kind, area=area, beds=beds, rooms=rooms,
             floor=floor if floor is not None else (0 if kind == 'house' else R.randint(0, 6)), price=price, tag=tag, agencies=[])
    props.append(p)
    return p

AG = ['nord', 'moselle', 'capital']
# ---- ordinary properties: 1500 in all incl. hard negatives (hard negatives ~ 330 properties)
N_TOTAL = 1500
# hard negatives first
hn = []
for i in range(25):  # twin flats: same building, same area, same price, different floor; two agencies
    b = new_building(); a, c = R.sample(AG, 2)
    p1 = new_prop(b, kind='flat', tag='twin'); p2 = new_prop(b, ltype=p1['ltype'], kind='flat', area=p1['area'], beds=p1['beds'], price=p1['price'], tag='twin', floor=(p1['floor'] + R.randint(1, 3)))
    p2['rooms'] = p1['rooms']; p1['agencies'] = [a]; p2['agencies'] = [c]; p1['pair'] = p2['pid']; p2['pair'] = p1['pid']
for i in range(40):  # look-alikes in one commune: other building 150-1500 m away, area/price within 2 %
    b = new_building(); b2 = new_building(place=b['place'], near=b, dist=R.uniform(150, 1500)); a, c = R.sample(AG, 2)
    p1 = new_prop(b, kind='flat', tag='lookalike')
    p2 = new_prop(b2, ltype=p1['ltype'], kind='flat', area=round(p1['area'] * R.uniform(0.98, 1.02), 2), beds=p1['beds'], price=p1['price'] * R.uniform(0.98, 1.02), tag='lookalike')
    p2['rooms'] = p1['rooms']; p1['agencies'] = [a]; p2['agencies'] = [c]; p1['pair'] = p2['pid']; p2['pair'] = p1['pid']
for i in range(25):  # same agency, two flats in one building (10 of them: one flat also listed by another agency)
    b = new_building(); a = R.choice(AG)
    p1 = new_prop(b, kind='flat', tag='sameagency')
    p2 = new_prop(b, ltype=p1['ltype'], kind='flat', area=round(p1['area'] * R.uniform(0.97, 1.03), 2), beds=p1['beds'], price=p1['price'] * R.uniform(0.98, 1.02), tag='sameagency', floor=p1['floor'] + 1)
    p2['rooms'] = p1['rooms']; p1['agencies'] = [a]; p2['agencies'] = [a]; p1['pair'] = p2['pid']; p2['pair'] = p1['pid']
    if i < 10: p1['agencies'].append(R.choice([x for x in AG if x != a]))
for i in range(15):  # studios 19 vs 20 m2 in two buildings of one commune, same rent
    b = new_building(); b2 = new_building(place=b['place'], near=b, dist=R.uniform(120, 700)); a, c = R.sample(AG, 2)
    rent = R.choice([950, 990, 1000, 1050, 1100])
    p1 = new_prop(b, ltype='RENT', kind='studio', area=19.0, beds=0, price=rent, tag='studio19')
    p2 = new_prop(b2, ltype='RENT', kind='studio', area=20.0, beds=0, price=rent, tag='studio19')
    p1['agencies'] = [a]; p2['agencies'] = [c]; p1['pair'] = p2['pid']; p2['pair'] = p1['pid']
for i in range(20):  # a rental and a sale of the same flat (two listings, two "properties" for us)
    b = new_building(); a, c = R.sample(AG, 2) if i % 2 else (R.choice(AG),) * 2
    p1 = new_prop(b, ltype='RENT', kind='flat', tag='rentsale')
    p2 = new_prop(b, ltype='SALE', kind='flat', area=p1['area'], beds=p1['beds'], floor=p1['floor'], tag='rentsale', pid=p1['pid'] + 'S')
    p2['rooms'] = p1['rooms']; p1['agencies'] = [a]; p2['agencies'] = [c]; p1['pair'] = p2['pid']; p2['pair'] = p1['pid']
n_hn = len(props)
multi_target = 400 - 10  # the 10 same-agency flats above are multi-listed already
while len(props) < N_TOTAL:
    p = new_prop(new_building())
    k = len(props) - n_hn
    if k <= 290: p['agencies'] = R.sample(AG, 2)
    elif k <= multi_target: p['agencies'] = list(AG)
    else: p['agencies'] = [R.choice(AG)]
    R.shuffle(p['agencies'])

# ---- agency rendering
def agency_price(p, ag):
    base = p['price']
    if R.random() < 0.45 and p['tag'] not in ('twin', 'studio19'): x = base
    elif p['tag'] in ('twin', 'studio19'): x = base
    else: x = base * (1 + R.uniform(-0.015, 0.015))
    if p['ltype'] == 'SALE':
        x = round(x / 1000) * 1000
        if R.random() < 0.3: x -= 100  # ...900
        return int(x)
    if p['tag'] == 'studio19': return int(base)
    step = {'nord': 10, 'moselle': 10, 'capital': 50}[ag]
    x = round(x / step) * step
    if R.random() < 0.1 and x > 1000: x = round(x / 100) * 100 - 10  # 1990-style
    return int(x)
# one price per property shared across agencies when "same", else per-agency; decide once per (p, ag)
def render_all():
    recs = {a: [] for a in AG}
    seq = {'nord': 1000, 'moselle': 5000, 'capital': 2000}
    for p in props:
        same_price = R.random() < 0.45
        shared = None
        for ag in p['agencies']:
            seq[ag] += R.randint(1, 3)
            price = agency_price(p, ag)
            if same_price:
                shared = shared or price; price = shared if p['ltype'] == 'RENT' or True else price
            recs[ag].append(dict(p=p, ext={'nord': f'NW-{seq[ag]}', 'moselle': f'MS-{seq[ag]}', 'capital': f'CA-{seq[ag]}'}[ag], price=price))
    return recs
recs = render_all()

TITLES = {
 'fr': {'studio': 'Studio {a} m² à {l}', 'flat': 'Appartement {b} chambre(s) à {l}, {f}e étage', 'house': 'Maison {b} chambres à {l}'},
 'de': {'studio': 'Studio {a} m² in {l}', 'flat': '{r}-Zimmer-Wohnung in {l}, {f}. OG', 'house': 'Einfamilienhaus mit {b} Schlafzimmern in {l}'},
 'en': {'studio': 'Studio {a} sqm in {l}', 'flat': '{b}-bedroom flat in {l}, floor {f}', 'house': '{b}-bedroom house in {l}'},
}
def title(p, lang, l):
    return TITLES[lang][p['kind']].format(a=int(p['area']), b=p['beds'], r=p['rooms'], f=p['floor'], l=l)

DE_COMMUNE = {r['name']: r['name_de'] for r in communes.values()}
def loc_text_nord(p):  # German forms: ort = German commune name, regionaler_zusatz = locality (German alt)
    pl = p['b']['place']; c = pl['commune']
    ort = DE_COMMUNE.get(c) or c
    if c == 'Esch-sur-Alzette': ort = R.choice(['Esch an der Alzette', 'Esch-Uelzecht', 'Esch/Alzette'])
    zus = None
    if pl['loc'] != c:
        zus = pl['loc']
        de_alts = [x for x in pl['alt'] if any(ch in x for ch in 'äöüß') or x.endswith(('ingen', 'weg', 'viertel'))]
        if de_alts and R.random() < 0.6: zus = de_alts[0]
        if '/' in zus: zus = zus.split(' / ')[0]
    return ort, zus
def loc_text_moselle(p):
    pl = p['b']['place']; c = pl['commune']
    if c == 'Luxembourg':
        q = pl['loc'].split(' / ')[0]
        s = R.choice([f'Luxembourg-{q}', q, f'Luxembourg {q}', f'{q}'])
    elif c == 'Esch-sur-Alzette':
        s = R.choice(['ESCH/ALZETTE', 'Esch-sur-Alzette', 'Esch sur Alzette', pl['loc']])
    else:
        s = pl['loc'] if pl['loc'] != c else c
    s = strip_acc(s)
    if R.random() < 0.25: s = s.upper()
    return s
def loc_text_capital(p):
    pl = p['b']['place']
    return pl['loc'].split(' / ')[0] if pl['loc'] != pl['commune'] else pl['commune']

def coords(p, ag):
    b = p['b']
    if ag == 'nord':
        if R.random() < 0.05: return None
        return offset(b['lat'], b['lng'], R.uniform(0, 6))
    if ag == 'moselle':
        if R.random() < 0.12: return None
        return offset(b['lat'], b['lng'], R.uniform(20, 80))
    u = R.random()
    if u < 0.4: return None
    if u < 0.6:
        c = communes[b['place']['commune']]; return float(c['lat']), float(c['lng'])
    return offset(b['lat'], b['lng'], R.uniform(0, 15))

truth = []
# XML
x = ['<?xml version="1.0" encoding="UTF-8"?>', '<openimmo>', '<uebertragung art="OFFLINE" umfang="VOLL" modus="NEW" version="1.2.7" sendersoftware="ProbeSoft"/>', '<anbieter><anbieternr>NW-1</anbieternr><firma>Nordwest Immo</firma>']
for r in recs['nord']:
    p = r['p']; ort, zus = loc_text_nord(p); cc = coords(p, 'nord'); area = round(p['area'] * 2) / 2
    kauf = p['ltype'] == 'SALE'
    objart = '<haus haustyp="EINFAMILIENHAUS"/>' if p['kind'] == 'house' else '<wohnung wohnungtyp="ETAGE"/>'
    geo = f"<plz>{'L-' if R.random()<0.5 else ''}{p['b']['pc']}</plz>" if R.random() < 0.8 else ''
    geo += f'<ort>{escape(ort)}</ort>' + (f'<regionaler_zusatz>{escape(zus)}</regionaler_zusatz>' if zus else '')
    if cc: geo += f'<geokoordinaten breitengrad="{cc[0]:.6f}" laengengrad="{cc[1]:.6f}"/>'
    preis = f'<kaufpreis>{r["price"]}</kaufpreis>' if kauf else f'<kaltmiete>{r["price"]}.00</kaltmiete>'
    rooms = f'<anzahl_zimmer>{p["rooms"]}</anzahl_zimmer>' if R.random() > 0.2 else ''
    x.append(f'''<immobilie><objektkategorie><nutzungsart WOHNEN="true" GEWERBE="false"/><vermarktungsart KAUF="{str(kauf).lower()}" MIETE_PACHT="{str(not kauf).lower()}"/><objektart>{objart}</objektart></objektkategorie>
<geo>{geo}<land iso_land="LUX"/></geo><preise>{preis}<waehrung iso_waehrung="EUR"/></preise><flaechen><wohnflaeche>{area:.2f}</wohnflaeche>{rooms}</flaechen>
<freitexte><objekttitel>{escape(title(p, 'de', zus or ort))}</objekttitel></freitexte>
<anhaenge><anhang location="REMOTE" gruppe="BILD"><daten><pfad>https://img.nordwest.example/{r['ext']}/1.jpg</pfad></daten></anhang></anhaenge>
<verwaltung_techn><objektnr_extern>{r['ext']}</objektnr_extern><stand_vom>2026-11-{R.randint(1,28):02d}</stand_vom></verwaltung_techn></immobilie>''')
    truth.append(dict(source='probe-nord', external_id=r['ext'], pid=p['pid'], tag=p['tag'], ltype=p['ltype'], floor=p['floor'], building=p['b']['id'], true_area=p['area'], true_rooms=p['rooms'], pair=p.get('pair')))
x.append('</anbieter></openimmo>')
open(f'{OUT}/probe-nord.xml', 'w', encoding='utf-8').write('\n'.join(x) + '\n')

# CSV
hdr = "Référence;Type d'offre;Type de bien;Titre;Prix;Surface;Pièces;Chambres;Localité;Code postal;Latitude;Longitude;Photos;Étudiants;Date de création;Lien"
lines = ['\ufeff' + hdr]
def q(s): return '"' + s.replace('"', '""') + '"'
for r in recs['moselle']:
    p = r['p']; cc = coords(p, 'moselle')
    area = round(p['area'] * (1 + R.uniform(-0.03, 0.03)), 1) if p['tag'] != 'studio19' else p['area']
    a_s = f'{area:.1f}'.replace('.', ',')
    a_s = R.choice([a_s, a_s + ' m²', a_s.replace(',', '.')])
    pr = r['price']
    ps = R.choice([str(pr), f'{pr:,}'.replace(',', ' '), f'{pr:,}'.replace(',', '.') + (' €' if R.random() < .5 else '')])
    pieces = str(p['rooms']) if R.random() < 0.85 else ''
    ch = str(p['beds']) if (R.random() < 0.6 or not pieces) else ''
    typ = 'Vente' if p['ltype'] == 'SALE' else 'Location'
    if R.random() < 0.2: typ = typ.upper()
    lat = lng = ''
    if cc:
        lat, lng = f'{cc[0]:.5f}', f'{cc[1]:.5f}'
        if R.random() < 0.4: lat, lng = lat.replace('.', ','), lng.replace('.', ',')
    pc = (R.choice(['L-', '']) + str(p['b']['pc'])) if R.random() < 0.6 else ''
    d = f'{R.randint(1,28):02d}/11/2026 {R.randint(8,19):02d}:{R.randint(0,59):02d}'
    lines.append(';'.join([r['ext'], typ, {'studio': 'Studio', 'flat': 'Appartement', 'house': 'Maison'}[p['kind']], q(title(p, 'fr', loc_text_capital(p))), q(ps), q(a_s), pieces, ch,
                           q(loc_text_moselle(p)), pc, q(lat), q(lng), f'https://photos.moselle.example/{r["ext"]}.jpg', R.choice(['oui', 'non', '']), d, f'https://www.moselle.example/biens/{r["ext"]}']))
    truth.append(dict(source='probe-moselle', external_id=r['ext'], pid=p['pid'], tag=p['tag'], ltype=p['ltype'], floor=p['floor'], building=p['b']['id'], true_area=p['area'], true_rooms=p['rooms'], pair=p.get('pair')))
open(f'{OUT}/probe-moselle.csv', 'w', encoding='utf-8').write('\n'.join(lines) + '\n')

# JSON
L = []
for r in recs['capital']:
    p = r['p']; cc = coords(p, 'capital'); loc = loc_text_capital(p)
    t = {'en': title(p, 'en', loc)}
    if R.random() < 0.5: t['fr'] = title(p, 'fr', loc)
    if R.random() < 0.2: t = {'de': title(p, 'de', loc)}
    addr = {'street': f"{p['b']['no']}, {p['b']['street']}", 'locality': loc, 'country': 'LU'}
    if R.random() < 0.7: addr['postcode'] = f"L-{p['b']['pc']}"
    L.append({'ref': r['ext'], 'offer': 'sale' if p['ltype'] == 'SALE' else 'rent', 'status': 'available', 'title': t,
              'price': {'amount': r['price'], 'currency': 'EUR', 'period': 'month'}, 'surface_m2': round(p['area']) if p['tag'] != 'studio19' else p['area'],
              'bedrooms': p['beds'], 'address': addr, 'geo': {'lat': round(cc[0], 6), 'lon': round(cc[1], 6)} if cc else None,
              'media': [{'type': 'photo', 'url': f'https://cdn.capital.example/{r["ext"]}/1.jpg'}], 'students': False,
              'published_at': f'2026-11-{R.randint(1,28):02d}T{R.randint(6,20):02d}:00:00Z', 'link': f'https://capital.example/l/{r["ext"]}'})
    truth.append(dict(source='probe-capital', external_id=r['ext'], pid=p['pid'], tag=p['tag'], ltype=p['ltype'], floor=p['floor'], building=p['b']['id'], true_area=p['area'], true_rooms=p['rooms'], pair=p.get('pair')))
json.dump({'agency': 'Capital Probe', 'generated_at': '2026-11-30T06:00:00+01:00', 'mode': 'full', 'listings': L}, open(f'{OUT}/probe-capital.json', 'w', encoding='utf-8'), ensure_ascii=False, indent=0)
with open(f'{OUT}/truth.jsonl', 'w') as f:
    for t in truth: f.write(json.dumps(t, ensure_ascii=False) + '\n')
formats = {'probe-nord': 'openimmo', 'probe-moselle': 'csv', 'probe-capital': 'json'}
json.dump({'agencies': [{'source': s, 'format': f} for s, f in formats.items()],
           'listings': [{'source': t['source'], 'external_id': t['external_id'], 'pid': t['pid']} for t in truth]}, open(f'{OUT}/truth.json', 'w'))
from collections import Counter
pc = Counter(t['pid'] for t in truth)
print('properties', len(props), 'records', len(truth), 'by agency', Counter(t['source'] for t in truth), 'listed k times', Counter(pc.values()), 'tags', Counter(p['tag'] for p in props))
