"""Mirrors the feed into a SQLite file with requests: listings by id, and the cursor.
Run it daily: it goes on from the stored cursor.
  BASE=http://localhost:3000 KEY=lfk_... python3 sync.py mirror.db           every tier
  BASE=http://localhost:3000 KEY=lfk_... EXPORT=1 python3 sync.py mirror.db  Pro, Enterprise: export first
  python3 sync.py mirror.db --dump                                           the listings, one a line
"""
import json
import os
import sqlite3
import sys

import requests


def open_mirror(path):
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE IF NOT EXISTS listings (id TEXT PRIMARY KEY, listing TEXT NOT NULL)")
    db.execute("CREATE TABLE IF NOT EXISTS state (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
    return db


def get(session, url, **kwargs):
    res = session.get(url, **kwargs)
    if not res.ok:
        problem = res.json()
        raise SystemExit(f"{problem['status']} {problem['code']}: {problem['detail']}")
    return res


def sync(db, base, key, export=False):
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {key}"
    row = db.execute("SELECT value FROM state WHERE name = 'cursor'").fetchone()
    cursor = row[0] if row else None
    if cursor is None:
        # From scratch: drop what a run cut short before its first cursor, or a walk of another
        # view (a new walk after a change of tier), left behind.
        with db:
            db.execute("DELETE FROM listings")
    if cursor is None and export:
        # The whole set in one request, from one snapshot; /changes goes on from its cursor.
        with get(session, f"{base}/api/v1/listings/export", stream=True) as res:
            with db:
                for line in res.iter_lines():
                    if line:
                        listing = json.loads(line)
                        db.execute("INSERT OR REPLACE INTO listings VALUES (?, ?)", (listing["id"], line.decode("utf-8")))
                cursor = res.headers["X-Changes-Cursor"]
                db.execute("INSERT OR REPLACE INTO state VALUES ('cursor', ?)", (cursor,))
    while True:
        params = {"limit": 1000}
        if cursor:
            params["since"] = cursor
        page = get(session, f"{base}/api/v1/changes", params=params).json()
        with db:  # the page and its cursor in one transaction
            for change in page["data"]:
                if change["op"] == "upsert":
                    db.execute("INSERT OR REPLACE INTO listings VALUES (?, ?)", (change["id"], json.dumps(change["listing"])))
                else:  # withdrawn, merged (into change["merged_into"]) or hidden
                    db.execute("DELETE FROM listings WHERE id = ?", (change["id"],))
            cursor = page["meta"]["next_cursor"]
            db.execute("INSERT OR REPLACE INTO state VALUES ('cursor', ?)", (cursor,))
        if not page["meta"]["has_more"]:
            return


if __name__ == "__main__":
    mirror = open_mirror(sys.argv[1])
    if sys.argv[2:] == ["--dump"]:
        for (listing,) in mirror.execute("SELECT listing FROM listings ORDER BY id"):
            print(listing)
    else:
        sync(mirror, os.environ["BASE"], os.environ["KEY"], export=os.environ.get("EXPORT") == "1")
