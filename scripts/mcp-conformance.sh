#!/usr/bin/env bash
# Runs the official MCP conformance suite's client scenarios against totem's MCP client
# (python -m totem.mcp.conformance_client, which goes through McpManager and McpTool).
#   bash scripts/mcp-conformance.sh                  install if needed, run the scenarios
#   bash scripts/mcp-conformance.sh SCENARIO...      run only these
#   bash scripts/mcp-conformance.sh --install        install only
#   bash scripts/mcp-conformance.sh --installed      exit 0 when installed, 1 otherwise
# The suite needs Node 22, which comes from npm as the package node@22; both are cached
# under ${XDG_CACHE_HOME:-~/.cache}/totem-dev/mcp-conformance (a second run installs nothing).
# Every auth/* client scenario the suite lists runs too: totem's OAuth sign-in (mcp/oauth.py,
# and mcp/cross_app.py for the identity-provider extension), with a plain HTTP client in place
# of the browser (the suite's authorization endpoint redirects at once to totem's loopback
# address).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/totem-dev/mcp-conformance"
NODE_VERSION=22.23.3
SUITE_VERSION=0.1.16
# One scenario runs from the suite's next version, where its own server is fixed: in 0.1.16
# the 2025-03-26 metadata back-compat server answers /.well-known/oauth-authorization-server
# (at the root) with the issuer http://HOST/oauth, whose own metadata address (RFC 8414:
# .../oauth-authorization-server/oauth) is 404, and serves no /authorize, /token or /register
# at the root to fall back to. RFC 8414 section 3.3, which the 2025-03-26 spec makes clients
# follow, forbids using metadata whose issuer differs; the SDK refuses it. The 0.2 prereleases
# serve the root issuer there (metadataIssuer); no stable release after 0.1.16 exists yet.
NEXT_VERSION=0.2.0-alpha.12
FROM_NEXT=(auth/2025-03-26-oauth-metadata-backcompat)
STAMP="node-$NODE_VERSION suite-$SUITE_VERSION next-$NEXT_VERSION"
SCENARIOS=(initialize tools_call elicitation-sep1034-client-defaults sse-retry)  # + every auth/*
PY="${PYTHON:-$here/.venv/bin/python}"
[ -x "$PY" ] || PY=python3

installed() { [ "$(cat "$CACHE/.installed" 2>/dev/null)" = "$STAMP" ]; }

install() {
  installed && return 0
  mkdir -p "$CACHE"
  cat >"$CACHE/package.json" <<JSON
{"name": "totem-mcp-conformance", "private": true,
 "dependencies": {"node": "$NODE_VERSION", "@modelcontextprotocol/conformance": "$SUITE_VERSION",
                  "conformance-next": "npm:@modelcontextprotocol/conformance@$NEXT_VERSION"}}
JSON
  (cd "$CACHE" && npm install --no-audit --no-fund --loglevel=error >/dev/null)
  "$CACHE/node_modules/.bin/node" --version | grep -q '^v22\.' \
    || { echo "mcp-conformance: node 22 did not install" >&2; exit 1; }
  echo "$STAMP" >"$CACHE/.installed"
}

case "${1:-}" in
  --installed) installed; exit $? ;;
  --install) install; exit 0 ;;
esac
install
export PATH="$CACHE/node_modules/.bin:$PATH"
# both versions name their command `conformance`: each is run by its own path
SUITE="node $CACHE/node_modules/@modelcontextprotocol/conformance/dist/index.js"
if [ $# -gt 0 ]; then
  SCENARIOS=("$@")
else
  mapfile -t auth < <($SUITE list 2>&1 | sed -n '/Client scenarios/,$p' \
    | grep -o 'auth/[A-Za-z0-9_-]*' | grep -vxF -f <(printf '%s\n' "${FROM_NEXT[@]}"))
  [ "${#auth[@]}" -gt 0 ] || { echo "mcp-conformance: the suite lists no auth scenarios" >&2; exit 1; }
  SCENARIOS+=("${auth[@]}" "${FROM_NEXT[@]}")
fi
suite_for() {  # the suite's command line for scenario $1
  if printf '%s\n' "${FROM_NEXT[@]}" | grep -qxF "$1"; then
    echo "node $CACHE/node_modules/conformance-next/dist/index.js"
  else
    echo "$SUITE"
  fi
}
out=$(mktemp -d "${TMPDIR:-/tmp}/totem-conformance.XXXXXX")
trap 'rm -rf "$out"' EXIT
passed=0; failed=0; failures=()
for scenario in "${SCENARIOS[@]}"; do
  log="$out/$(echo "$scenario" | tr '/' '_').log"
  if (cd "$out" && $(suite_for "$scenario") client --command "$PY -m totem.mcp.conformance_client" \
        --scenario "$scenario" --timeout 30000 -o "$out/results") >"$log" 2>&1 \
      && grep -q 'OVERALL: PASSED' "$log"; then
    passed=$((passed + 1)); echo "PASS $scenario"
  else
    failed=$((failed + 1)); failures+=("$scenario"); echo "FAIL $scenario"
    sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -v ' INFO ' | tail -25 | sed 's/^/    /'
  fi
done
echo "mcp-conformance: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
