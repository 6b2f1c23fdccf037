#!/usr/bin/env python3
"""quality61 generator: ~600 properties, 4 agencies, 3 formats, with ground truth."""
import csv, json, math, os, random, sys, unicodedata
OUT = sys.argv[1] if len(sys.argv) > 1 else '/tmp/sixteenth'
os.makedirs(OUT, exist_ok=True)
from xml.sax.saxutils import escape
R = random.Random(6161)
D = '/work/shared/data/'
communes = {r['name']: r for r in csv.DictReader(open(D+'communes.csv'))}
rents = {r['commune']: r for r in csv.DictReader(open(D+'rents.csv'))}
locs = {}
for r in csv.DictReader(open(D+'localities.csv')):
    if r['lat']:
        locs.setdefault(r['commune'], []).append(r)
CHOSEN = ['Luxembourg','Esch-sur-Alzette','Differdange','Dudelange','Sanem','Pétange','Strassen',
          'Bertrange','Hesperange','Mersch','Ettelbruck','Diekirch','Wiltz','Walferdange','Mamer']
WEIGHT = {'Luxembourg': 150, 'Esch-sur-Alzette': 70}
def noacc(s): return ''.join(c for c in unicodedata.normalize('NFD', s) if unicodedata.category(c) != 'Mn')
def off(lat, lng, metres):
    a = R.uniform(0, 2*math.pi)
    return (lat + metres*math.cos(a)/111320, lng + metres*math.sin(a)/(111320*math.cos(math.radians(lat))))
def rate(c, kind, typ):
    r = rents[c]
    if typ == 'RENT':
        v = float(r['apt_rent_avg_eur_m2_month'] or 30)
        return min(v, 38) * (0.9 if kind == 'house' else 1)
    v = float((r['house_sale_advertised_avg_eur_m2'] if kind == 'house' else r['apt_sale_advertised_avg_eur_m2']) or 7000)
    return v
props = []
def new_prop(c, typ=None, kind=None, base=None, **kw):
    pid = 'P%04d' % len(props)
    if base is None:
        loc = R.choice(locs[c])
        lat, lng = off(float(loc['lat']), float(loc['lng']), R.uniform(50, 900))
        locality = loc['locality']
    else:
        lat, lng, locality = base['lat'], base['lng'], base['locality']
    kind = kind or ('house' if R.random() < 0.2 else 'apt')
    typ = typ or ('RENT' if R.random() < 0.6 else 'SALE')
    if kind == 'apt':
        rooms = R.choice([1,2,2,3,3,3,4,4,5])
        area = round(28 + 22*(rooms-1) + R.uniform(-8, 12), 1)
    else:
        rooms = R.choice([4,5,5,6,7]); area = float(R.randint(110, 230))
    p = dict(pid=pid, commune=c, locality=locality, lat=lat, lng=lng, kind=kind, type=typ,
             rooms=rooms, area=area)
    p.update(kw)
    if 'price' not in p:
        pr = p['area'] * rate(c, kind, typ) * R.uniform(0.85, 1.15)
        p['price'] = int(round(pr, -1)) if typ == 'RENT' else int(round(pr, -3))
    props.append(p)
    return p
# communes quota
quota = {c: WEIGHT.get(c, 30) for c in CHOSEN}
# hard negatives first
hardneg = []
pool = [c for c in CHOSEN for _ in range(quota[c] // 30)]
for i in range(25):   # sibling flats, same building
    c = R.choice(pool); a = new_prop(c, kind='apt')
    grp = [a]
    for j in range(R.choice([1, 1, 2])):
        b = new_prop(c, typ=a['type'], kind='apt', base=a, rooms=a['rooms'],
                     area=round(a['area'] + R.choice([0, 0, 1.5, -2, 3.5, 5]), 1))
        b['price'] = int(round(a['price'] * R.uniform(0.96, 1.05), -1 if a['type']=='RENT' else -3))
        grp.append(b)
    hardneg.append(('siblings', [p['pid'] for p in grp]))
for i in range(15):   # twin houses
    c = R.choice(pool); a = new_prop(c, typ='SALE', kind='house')
    b = new_prop(c, typ='SALE', kind='house', base=a, rooms=a['rooms'], area=a['area'],
                 price=a['price'] + R.choice([0, 0, 5000, -10000]))
    b['lat'], b['lng'] = off(a['lat'], a['lng'], 14)
    hardneg.append(('twins', [a['pid'], b['pid']]))
for i in range(12):   # same flat let and sold
    c = R.choice(pool); a = new_prop(c, typ='RENT', kind='apt')
    b = new_prop(c, typ='SALE', kind='apt', base=a, rooms=a['rooms'], area=a['area'])
    hardneg.append(('let_and_sold', [a['pid'], b['pid']]))
n_hard = len(props)
while len(props) < 600:
    c = R.choices(CHOSEN, weights=[quota[c] for c in CHOSEN])[0]
    new_prop(c)
# outlier target and extra no-area rentals in Esch
out_p = new_prop('Esch-sur-Alzette', typ='RENT', kind='apt', rooms=4, area=95.0, price=37800, outlier=True)
AG = ['q61-nord', 'q61-moselle', 'q61-capital', 'q61-centre']
FMT = {'q61-nord': 'openimmo', 'q61-moselle': 'csv', 'q61-capital': 'json', 'q61-centre': 'csv'}
# multi-listing: 150 properties, 100 by 2 agencies, 50 by 3; hard negatives: members listed by different agencies
ids = [p['pid'] for p in props if not p.get('outlier')]
R.shuffle(ids)
multi = set(ids[:150])
assign = {}
for k, pid in enumerate(ids):
    if pid in multi:
        assign[pid] = R.sample(AG, 2 if k < 100 else 3)
    else:
        assign[pid] = [R.choice(AG)]
# hard negative groups: spread members over different agencies when single-listed
for kind, grp in hardneg:
    ags = R.sample(AG, len(grp))
    for pid, ag in zip(grp, ags):
        if pid not in multi: assign[pid] = [ag]
assign[out_p['pid']] = ['q61-capital']
out_p['area'] = None
# place name renderings
def place(p, ag):
    c = communes[p['commune']]; r = R.random()
    if r < 0.3 and p['locality'] != p['commune']:
        name = p['locality']
        if ' / ' in name: name = name.split(' / ')[0]
        return name
    forms = [c['name'], c['name_de'], c['name_lb'], c['name'].upper(), noacc(c['name']), noacc(c['name']).lower()]
    if p['commune'] == 'Esch-sur-Alzette': forms += ['ESCH/ALZETTE', 'Esch-Uelzecht', 'Esch an der Alzette']
    if p['commune'] == 'Luxembourg': forms += ['Luxembourg-Ville', 'Lëtzebuerg', 'Luxemburg']
    if ag == 'q61-nord': return R.choice([c['name_de'], c['name'], c['name_lb']])
    return R.choice(forms)
TITLE = {'apt': {'fr': 'Appartement %d chambres', 'en': '%d-bedroom flat', 'de': 'Wohnung mit %d Schlafzimmern'},
         'house': {'fr': 'Maison %d chambres', 'en': '%d-bedroom house', 'de': 'Haus mit %d Schlafzimmern'}}
listings = []
noise_log = []
for p in props:
    for n, ag in enumerate(assign[p['pid']]):
        first = (n == 0)
        L = dict(pid=p['pid'], source=ag, type=p['type'], rooms=p['rooms'])
        # price noise
        pr = p['price']; r = R.random(); pn = 'exact'
        if not first and not p.get('outlier'):
            if r < 0.3: pr = int(round(pr / 50) * 50) if p['type']=='RENT' else int(round(pr / 5000) * 5000); pn = 'rounded'
            elif r < 0.5: pr = int(round(pr * R.uniform(0.96, 1.04), -1 if p['type']=='RENT' else -3)); pn = 'pm4pct'
            elif r < 0.58 and p['type']=='RENT': pr = pr + R.choice([150, 200, 250]); pn = 'charges_incl'
        L['price'] = pr
        # area noise
        a = p['area']; r = R.random(); an = 'exact'
        if a is None: an = 'none'
        elif p['type']=='RENT' and r < 0.12: a = None; an = 'missing'
        elif not first:
            if r < 0.3: a = float(round(a)); an = 'int'
            elif r < 0.45: a = round(a * R.uniform(1.05, 1.10), 1); an = 'gross'
            elif r < 0.55: a = None; an = 'missing'
        L['area'] = a
        # rooms noise: another agency counts differently sometimes
        rn = 'exact'
        if not first and R.random() < 0.08: L['rooms'] = p['rooms'] + 1; rn = 'plus1'
        # coords
        r = R.random(); cn = 'building'
        if r < 0.45: lat, lng = off(p['lat'], p['lng'], R.uniform(0, 10))
        elif r < 0.65: lat, lng = off(p['lat'], p['lng'], R.uniform(80, 250)); cn = 'street'
        elif r < 0.8: lat, lng = float(communes[p['commune']]['lat']), float(communes[p['commune']]['lng']); cn = 'centroid'
        else: lat = lng = None; cn = 'missing'
        if lat is not None: lat, lng = round(lat, 5), round(lng, 5)
        if lat is not None and R.random() < 0.03: lat, lng = lng, lat; cn += '+swapped'
        L['lat'], L['lng'] = lat, lng
        L['place'] = place(p, ag)
        L['kind'] = p['kind']
        L['students'] = R.random() < 0.1
        L['created'] = '2026-%02d-%02dT%02d:%02d:00Z' % (R.randint(9, 11), R.randint(1, 28), R.randint(7, 19), R.randint(0, 59))
        noise_log.append(dict(pid=p['pid'], source=ag, price=pn, area=an, rooms=rn, coords=cn))
        listings.append(L)
R.shuffle(listings)
cnt = {}
for L in listings:
    cnt[L['source']] = cnt.get(L['source'], 0) + 1
    pre = {'q61-nord': 'QN', 'q61-moselle': 'QM', 'q61-capital': 'QC', 'q61-centre': 'QZ'}[L['source']]
    L['ext'] = '%s-%05d' % (pre, 1000 + cnt[L['source']] * 7)
def title(L, lang):
    b = max(L['rooms'] - 1, 0)
    return TITLE[L['kind']][lang] % b + (' à ' + L['place'] if lang == 'fr' else ' in ' + L['place'])
# ---- writers
def w_openimmo(src, Ls):
    o = ['<?xml version="1.0" encoding="UTF-8"?>', '<openimmo>',
         '<uebertragung art="OFFLINE" umfang="VOLL" modus="NEW" version="1.2.7" sendersoftware="q61"/>', '<anbieter>']
    for L in Ls:
        rent = L['type'] == 'RENT'
        o.append('<immobilie><objektkategorie><nutzungsart WOHNEN="true"/><vermarktungsart KAUF="%s" MIETE_PACHT="%s"/>'
                 '<objektart>%s</objektart></objektkategorie>' % ('false' if rent else 'true', 'true' if rent else 'false',
                 '<haus/>' if L['kind']=='house' else '<wohnung/>'))
        g = '<geo><ort>%s</ort>' % escape(L['place'])
        if L['lat'] is not None: g += '<geokoordinaten breitengrad="%s" laengengrad="%s"/>' % (L['lat'], L['lng'])
        o.append(g + '<land iso_land="LUX"/></geo>')
        o.append('<preise><%s>%s</%s><waehrung iso_waehrung="EUR"/></preise>' % (('kaltmiete',)*1 + (L['price'],) + ('kaltmiete',)) if rent else
                 '<preise><kaufpreis>%s</kaufpreis><waehrung iso_waehrung="EUR"/></preise>' % L['price'])
        f = '<flaechen>'
        if L['area'] is not None: f += '<wohnflaeche>%.2f</wohnflaeche>' % L['area']
        f += '<anzahl_zimmer>%s</anzahl_zimmer></flaechen>' % L['rooms']
        o.append(f)
        o.append('<freitexte><objekttitel>%s</objekttitel></freitexte>' % escape(title(L, 'de')))
        o.append('<verwaltung_objekt><user_defined_simplefield feldname="studenten">%d</user_defined_simplefield></verwaltung_objekt>' % L['students'])
        o.append('<verwaltung_techn><objektnr_extern>%s</objektnr_extern><stand_vom>%s</stand_vom></verwaltung_techn></immobilie>' % (L['ext'], L['created'][:10]))
    o += ['</anbieter>', '</openimmo>']
    open(os.path.join(OUT, '%s.xml' % src), 'w').write('\n'.join(o))
def w_csv(src, Ls, bedrooms_only):
    rows = ["Référence;Type d'offre;Type de bien;Titre;Prix;Surface;Pièces;Chambres;Localité;Code postal;Latitude;Longitude;Photos;Étudiants;Date de création;Lien"]
    for L in Ls:
        rent = L['type'] == 'RENT'
        pr = L['price']
        pstr = R.choice(['%d' % pr, '"%s €"' % format(pr, ',').replace(',', ' '), '"%s"' % format(pr, ',').replace(',', '.'), '"%d,00"' % pr])
        ar = '' if L['area'] is None else R.choice([('"%s m²"' % ('%g' % L['area']).replace('.', ',')), '%g' % L['area']])
        if bedrooms_only or R.random() < 0.3: pcs, ch = '', str(max(L['rooms'] - 1, 0))
        else: pcs, ch = str(L['rooms']), ''
        la = '' if L['lat'] is None else str(L['lat']).replace('.', ',' if R.random() < 0.5 else '.')
        ln = '' if L['lng'] is None else str(L['lng']).replace('.', ',' if R.random() < 0.5 else '.')
        d = L['created']
        dt = '%s/%s/%s %s' % (d[8:10], d[5:7], d[:4], d[11:16])
        rows.append(';'.join([L['ext'], R.choice(['Location', 'LOCATION', 'location']) if rent else R.choice(['Vente', 'VENTE']),
            'Maison' if L['kind']=='house' else 'Appartement', '"%s"' % title(L, 'fr'), pstr, ar, pcs, ch, L['place'], '', la, ln,
            'https://img.%s.example/%s.jpg' % (src, L['ext']), 'oui' if L['students'] else 'non', dt, 'https://%s.example/b/%s' % (src, L['ext'])]))
    open(os.path.join(OUT, '%s.csv' % src), 'w').write('\n'.join(rows) + '\n')
def w_json(src, Ls):
    out = []
    for L in Ls:
        rent = L['type'] == 'RENT'
        weekly = rent and R.random() < 0.05
        amt = L['price'] if not weekly else round(L['price'] * 12 / 52)
        if weekly: L['price'] = round(amt * 52 / 12)
        rec = dict(ref=L['ext'], offer='rent' if rent else 'sale', status='available',
                   title={'en': title(L, 'en'), 'fr': title(L, 'fr')},
                   price=dict(amount=amt, currency='EUR', period='week' if weekly else 'month'),
                   surface_m2=L['area'], bedrooms=max(L['rooms'] - 1, 0),
                   address=dict(locality=L['place'], country='LU'),
                   geo=None if L['lat'] is None else dict(lat=L['lat'], lon=L['lng']),
                   media=[dict(type='photo', url='https://cdn.%s.example/%s/1.jpg' % (src, L['ext']))],
                   students=L['students'], published_at=L['created'], link='https://%s.example/l/%s' % (src, L['ext']))
        out.append(rec)
    json.dump(dict(agency=src, generated_at='2026-12-01T06:00:00+01:00', mode='full', listings=out),
              open(os.path.join(OUT, '%s.json' % src), 'w'), ensure_ascii=False, indent=1)
by = {a: [L for L in listings if L['source'] == a] for a in AG}
w_openimmo('q61-nord', by['q61-nord'])
w_csv('q61-moselle', by['q61-moselle'], True)
w_json('q61-capital', by['q61-capital'])
w_csv('q61-centre', by['q61-centre'], False)
json.dump(dict(properties=props, hardneg=hardneg, assign=assign,
               listings=[{k: L[k] for k in ('pid', 'source', 'ext', 'type', 'price', 'area', 'rooms', 'lat', 'lng', 'place')} for L in listings],
               noise=noise_log), open(os.path.join(OUT, 'truth-full.json'), 'w'), indent=0, ensure_ascii=False)
# The folder-set truth of test/ingest/eval/folder-set.ts (added when it was kept here).
FORMATS = {'q61-nord': 'openimmo', 'q61-moselle': 'csv', 'q61-capital': 'json', 'q61-centre': 'csv'}
json.dump(dict(agencies=[dict(source=a, format=FORMATS[a]) for a in AG],
               listings=[dict(source=L['source'], external_id=L['ext'], pid=L['pid']) for L in listings]),
          open(os.path.join(OUT, 'truth.json'), 'w'))
print('properties', len(props), 'listings', len(listings), {a: len(v) for a, v in by.items()},
      'multi', sum(1 for v in assign.values() if len(v) > 1), 'hardneg groups', len(hardneg))
