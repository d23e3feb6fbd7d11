# lib-chrome.sh - headless Chromium for the HTML tests (sourced).
#
#   chrome ARGS...              chromium --headless with a new profile, no network
#   drive PAGE.html [SEARCH]    use the page through its controls
#                               (tests/html/drive.js) and write what it
#                               showed, as JSON, to PAGE.json
#   shot PAGE.html OUT.png [W H]  a screenshot of the whole window
chrome() {
	timeout 90 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--hide-scrollbars --user-data-dir="$(mktemp -d "$TRASH/chrome.XXXXXX")" "$@"
}

drive() {
	page=$1
	base=${page%.html}
	{
		sed '/<\/body><\/html>/d' "$page"
		printf '<script>\n'
		cat "$TOP/tests/html/drive.js"
		printf '</script>\n</body></html>\n'
	} >"$base.driven.html"
	chrome --window-size=1280,900 --virtual-time-budget=5000 --dump-dom \
		"file://$(cd "$(dirname "$base")" && pwd)/$(basename "$base").driven.html#search=${2:-}" \
		>"$base.dom" 2>"$base.chrome.log" || return 1
	/usr/bin/python3 -c '
import html, re, sys
m = list(re.finditer(r"<pre id=\"test-result\">(.*?)</pre>", open(sys.argv[1]).read(), re.S))
if not m:
    sys.exit("no test result in " + sys.argv[1])
open(sys.argv[2], "w").write(html.unescape(m[-1].group(1)))
' "$base.dom" "$base.json"
}

shot() {
	chrome --window-size="${3:-1280},${4:-1600}" --screenshot="$2" "file://$1" 2>/dev/null
}
