/*
 * drive.js - put into a copy of a memprov HTML page by the tests
 * (t5020, t5030): after the page has drawn itself, use it as a person
 * would (sort, open a row, show more, the toggles, search, zoom) through
 * its own controls, and write what each step showed as JSON into the
 * PRE element "test-result", which `chromium --dump-dom` prints.
 * The search text comes from the page's URL: page.html#search=PArray.
 */
(function () {
	'use strict';

	function run() {
		var R = { steps: [] }, q = decodeURIComponent((location.hash.match(/search=([^&]*)/) || [])[1] || '');
		var $ = function (s, root) { return (root || document).querySelector(s); };
		var $$ = function (s, root) { return Array.prototype.slice.call((root || document).querySelectorAll(s)); };
		var st = $('#status'), flame = $('#flame'), leaks = $('#leaks'), growing = $('#growing');

		function rows(sec) { return $$('table.data tbody tr.row', sec); }
		function cellTexts(sec, col) {
			return rows(sec).map(function (tr) { return tr.children[col].textContent; });
		}
		function boxes() { return $$('.flame .fb', flame); }
		function check(sel, on) {
			var c = $(sel);

			if (c && c.checked !== on) {
				c.checked = on;
				c.dispatchEvent(new Event('change'));
			}
			return !!c;
		}

		R.ok = st.getAttribute('data-ok');
		R.summary = st.getAttribute('data-summary');
		R.status_hidden = st.hidden;
		R.error = st.hidden ? null : st.textContent;
		R.page = { height: document.documentElement.scrollHeight, width: document.documentElement.scrollWidth,
			   window: window.innerWidth };
		R.visible_text_has_debug = /rendered:|timeline points/.test(document.body.innerText);
		R.cards = $$('.card').map(function (c) { return c.innerText.replace(/\s+/g, ' ').trim(); });
		R.timeline = MP.page && MP.page.timeline;
		/* what the chart drew: inked pixels, and those of the heap line's blue */
		(function () {
			var c = $('canvas.chart'), d, i, ink = 0, blue = 0;

			if (!c)
				return;
			d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
			for (i = 0; i < d.length; i += 4) {
				if (d[i] < 250 || d[i + 1] < 250 || d[i + 2] < 250)
					ink++;
				if (d[i + 2] > 150 && d[i] < 80)
					blue++;
			}
			R.chart = { width: c.width, height: c.height, ink: ink, blue: blue };
		})();
		R.legend = $('.legend') ? $('.legend').innerText : null;

		/* growing sites */
		R.growth = { rows: rows(growing).length, cells: rows(growing).map(function (tr) {
			return Array.prototype.map.call(tr.children, function (td) { return td.textContent; });
		}) };

		/* live at the end: rows, sort, open, show more, kept toggle, kinds */
		R.leaks = { rows: rows(leaks).length, more: !!$('.more .show-more', leaks), bytes: cellTexts(leaks, 4),
			    where: rows(leaks).map(function (tr) { return $('.at', tr).textContent; }),
			    badges: rows(leaks).map(function (tr) {
				    return $$('.badge', tr).map(function (b) { return b.textContent; }).join(' ');
			    }),
			    reach: $$('th', leaks).some(function (th) { return th.textContent.indexOf('at exit') === 0; }) ?
				   cellTexts(leaks, 5) : null,
			    counts: $('.what', leaks) ? $('.what', leaks).textContent : null };
		if (rows(leaks).length) {
			rows(leaks)[0].click();
			R.leaks.open_stack = $('tr.detail', leaks) ? $('tr.detail', leaks).innerText : null;
			rows(leaks)[0].click();
			R.leaks.closed = !$('tr.detail', leaks);
			$$('th.sortable', leaks).filter(function (th) { return /bytes/.test(th.textContent); })[0].click();
			R.leaks.bytes_after_sort = cellTexts(leaks, 4);
			R.leaks.sort_state = $$('th', leaks).map(function (th) { return th.getAttribute('aria-sort'); });
			$$('th.sortable', leaks).filter(function (th) { return /bytes/.test(th.textContent); })[0].click();
		}
		check('#leaks input[data-opt=hideKept]', false);
		R.leaks.rows_with_kept = rows(leaks).length;
		R.leaks.counts_with_kept = $('.what', leaks).textContent;
		if ($('.more .show-more', leaks)) {
			$('.more .show-more', leaks).click();
			R.leaks.rows_after_more = rows(leaks).length;
		}
		R.leaks.kinds = $$('.seg button', leaks).map(function (b) { return b.textContent; });
		check('#leaks input[data-opt=hideKept]', true);

		/* the flame graph */
		R.flame = { views: $$('.seg button', flame).map(function (b) { return b.getAttribute('data-view'); }),
			    frames: boxes().length, folded: $$('.fb.fold', flame).length,
			    names: boxes().map(function (b) { return b.getAttribute('data-name'); }).filter(Boolean),
			    what: $('.what', flame).textContent };
		check('#flame input[data-opt=fold]', false);
		R.flame.frames_unfolded = boxes().length;
		R.flame.names_unfolded = boxes().map(function (b) { return b.getAttribute('data-name'); }).filter(Boolean);
		check('#flame input[data-opt=hideNative]', false);
		R.flame.native_shown = boxes().filter(function (b) { return b.className.indexOf('t-n') >= 0; }).length;
		check('#flame input[data-opt=hideNative]', true);
		R.flame.native_hidden = boxes().filter(function (b) { return b.className.indexOf('t-n') >= 0; }).length;
		check('#flame input[data-opt=includeKept]', true);
		R.flame.with_kept = boxes().length;
		R.flame.interp_shown = boxes().filter(function (b) { return / t-[ix]\b/.test(' ' + b.className); }).length;
		check('#flame input[data-opt=hideInterp]', true);
		R.flame.interp_hidden = boxes().filter(function (b) { return / t-[ix]\b/.test(' ' + b.className); }).length;
		check('#flame input[data-opt=hideInterp]', false);
		check('#flame input[data-opt=includeKept]', false);
		if (q) {
			MP.page.flame.search(q);
			R.flame.search = { query: q, found: $('.found', flame).textContent, hits: $$('.fb.hit', flame).length,
					   dimmed: $$('.fb.dim', flame).length, bytes: MP.page.flame.state.matchedBytes,
					   root: MP.page.flame.root().v };
			MP.page.flame.search('');
		}
		/* zoom into the deepest box, then back */
		(function () {
			var b = boxes().filter(function (x) { return !/anc|fold/.test(x.className); });

			if (!b.length)
				return;
			b[b.length - 1].click();
			R.flame.crumbs_zoomed = $('.crumbs', flame).innerText;
			R.flame.zoom_v = MP.page.flame.zoom().v;
			$('button.reset', flame).click();
			R.flame.crumbs_reset = $('.crumbs', flame).innerText;
		})();
		var pre = document.createElement('pre');

		pre.id = 'test-result';
		pre.textContent = JSON.stringify(R);
		document.body.appendChild(pre);
	}

	if (document.readyState === 'loading')
		document.addEventListener('DOMContentLoaded', function () { setTimeout(run, 0); });
	else
		setTimeout(run, 0);
})();
