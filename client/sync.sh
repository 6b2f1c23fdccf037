#!/usr/bin/env bash
# Mirrors the feed into DIR: one file a listing (DIR/listings/<id>.json) and the cursor
# (DIR/cursor). Run it daily: it goes on from the stored cursor.
#   BASE=http://localhost:3000 KEY=lfk_… ./sync.sh DIR          every tier: /changes only
#   BASE=http://localhost:3000 KEY=lfk_… EXPORT=1 ./sync.sh DIR Pro, Enterprise: export first
set -euo pipefail
dir=${1:?usage: sync.sh DIR}
mkdir -p "$dir/listings"
auth="Authorization: Bearer $KEY"

# Reads "id<TAB>listing" lines ("-" for a delete) and applies them.
apply() {
  while IFS=$'\t' read -r id listing; do
    if [ "$listing" = "-" ]; then rm -f "$dir/listings/$id.json"; else printf '%s\n' "$listing" > "$dir/listings/$id.json"; fi
  done
}
save_cursor() { printf '%s\n' "$1" > "$dir/cursor.tmp" && mv "$dir/cursor.tmp" "$dir/cursor"; }

cursor=$(cat "$dir/cursor" 2>/dev/null || true)
# No cursor stored: the mirror is loaded from scratch. What a run cut short before its first
# cursor left behind goes first (it could hold listings withdrawn since, which no later change
# would name).
if [ -z "$cursor" ]; then rm -rf "$dir/listings"; mkdir -p "$dir/listings"; fi
if [ -z "$cursor" ] && [ "${EXPORT:-0}" = 1 ]; then
  # The whole set in one request, from one snapshot; /changes goes on from X-Changes-Cursor.
  curl -sS --fail-with-body --compressed -D "$dir/export.headers" -H "$auth" "$BASE/api/v1/listings/export" \
    | jq -rc '.id + "\t" + tojson' | apply
  cursor=$(sed -n 's/^[Xx]-[Cc]hanges-[Cc]ursor: *//p' "$dir/export.headers" | tr -d '\r')
  save_cursor "$cursor"
fi

while :; do
  page=$(curl -sS --fail-with-body --compressed -H "$auth" "$BASE/api/v1/changes?limit=1000${cursor:+&since=$cursor}")
  jq -rc '.data[] | .id + "\t" + (if .op == "upsert" then (.listing | tojson) else "-" end)' <<<"$page" | apply
  cursor=$(jq -r '.meta.next_cursor' <<<"$page")
  save_cursor "$cursor" # after the page is applied: an interrupted run repeats at most one page
  [ "$(jq -r '.meta.has_more' <<<"$page")" = true ] || break
done
