#!/bin/sh
# t_variants_table.sh — README's table comparing tiny-lm's variants is the one
# tools/variants_table.py builds from the shipped folders' READMEs (which t_shipped_variants
# holds to the stored weights), so the table cannot go stale.
cd "$(dirname "$0")/.." || exit 1
. tests/tap.sh
if ! [ -x /usr/bin/python3 ]; then
	echo "1..0 # SKIP /usr/bin/python3 not installed"
	exit 0
fi
echo "1..1"
check "README's variants table is what the shipped folders say ($(/usr/bin/python3 tools/variants_table.py --check README.md 2>&1 | tail -1))" \
	/usr/bin/python3 tools/variants_table.py --check README.md
exit $((fails > 0))
