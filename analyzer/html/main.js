/*
 * main.js - the page: read the data memprov wrote into
 * <script id="memprov-data">, then lay out the summary, the timeline,
 * the gap check, the growing sites, the memory live at the end (per kind,
 * what is kept on purpose hidden or not) and the flame graph. When done,
 * #status (hidden) carries data-ok="1" and a summary for tests; an error
 * shows on the page.
 */
(function (MP) {
	'use strict';

	var fmt = MP.fmt, V = MP.view, el = V.el;

	function section(id, title, sub) {
		return el('section', { id: id }, [el('h2', null, [title, sub ? el('span', { class: 'sub' }, sub) : null])]);
	}

	function card(cls, title, big, small) {
		return el('div', { class: 'card ' + cls }, [el('div', { class: 'ct' }, title), el('div', { class: 'cb' }, big),
			el('div', { class: 'cs' }, small)]);
	}

	function at(s) {
		var a = V.allocatedAt(s);

		return el('span', { class: 'at', title: a.title }, [el('span', { class: 'fn' }, a.fn), a.loc ? ' ' : null,
			a.loc ? el('span', { class: 'loc' }, a.loc) : null]);
	}

	function instant(D) {
		var L = D.leaks;

		return L.at === 'main-end' ? 'at the end of the main module (before finalization), ' + fmt.time(L.at_ns) :
			L.at === 'exit' ? 'at exit, ' + fmt.time(L.at_ns) : 'at the end of the trace, ' + fmt.time(L.at_ns);
	}

	function kindTotals(D, kept) {
		var t = D.leaks.totals, k, out = { blocks: 0, bytes: 0 };

		for (k in t) {
			out.blocks += t[k].blocks + (kept ? t[k].kept_blocks : 0);
			out.bytes += t[k].bytes + (kept ? t[k].kept_bytes : 0);
		}
		return out;
	}

	/* Growth needs at least 3 points in its window. */
	function judged(D) {
		return D.window && D.window.points >= 3;
	}

	/* Live at the end; with the scan at exit, what is lost (as valgrind would say). */
	function lostCard(D, live, kept) {
		var R = D.leaks.reach, lost = 0;

		if (!R || !R.shown)
			return card(live.bytes ? 'warn' : 'good', 'Live at the end', fmt.bytes(live.bytes),
				    fmt.count(live.blocks) + ' blocks; ' + fmt.bytes(kept.bytes - live.bytes) + ' more kept on purpose');
		R.classes.forEach(function (c) {
			if (/lost$/.test(c.name) && c.name !== 'possibly_lost')
				lost += c.bytes;
		});
		return card(lost ? 'bad' : live.bytes ? 'warn' : 'good', 'Live at exit', fmt.bytes(live.bytes),
			    fmt.bytes(lost) + ' lost (definitely or indirectly)' +
			    (kept.bytes > live.bytes ? '; ' + fmt.bytes(kept.bytes - live.bytes) + ' kept on purpose' : ''));
	}

	function header(app, D) {
		var S = D.suspects.filter(function (s) { return !s.kept; }), nExpl = D.suspects.length - S.length;
		var live = kindTotals(D, false), kept = kindTotals(D, true), G = D.gap, best = S[0];

		V.add(app, [
			el('header', null, [el('div', { class: 'brand' }, 'memprov'),
				el('h1', { title: D.command }, D.command)]),
			el('div', { class: 'meta' }, [el('span', null, ['trace ', el('code', null, D.trace)]),
				el('span', null, 'pid ' + D.pid), el('span', null, D.ended),
				el('span', null, 'ran ' + fmt.time(D.duration_ns)),
				D.skipped_events ? el('span', { class: 'warn' }, fmt.count(D.skipped_events) + ' events not recorded') : null]),
			el('div', { class: 'cards' }, [
				!judged(D) ? card('plain', 'Growing sites', 'not judged', 'too few points: put marks in the loop') :
				card(S.length ? 'bad' : 'good', 'Growing sites', S.length ? fmt.count(S.length) + ' growing' : 'none',
				     best ? '+' + fmt.bytes(best.slope_bytes) + '/' + D.unit + ' at ' + V.allocatedAt(best).fn :
				     nExpl ? fmt.count(nExpl) + ' explained by imports and caches' : 'over ' + D.window.text),
				lostCard(D, live, kept),
				card('plain', 'Peak of live memory', fmt.bytes(D.peak_bytes), 'at ' + fmt.time(D.peak_ns)),
				card(G && G.flagged ? 'warn' : 'plain', 'RSS vs tracked', !G ? 'no RSS samples' :
				     G.flagged ? 'gap ' + fmt.bytes(G.gap_bytes) : 'no gap',
				     !G ? 'MEMPROV_RSS_INTERVAL_MS' : G.basis === 'anonymous' ?
				     'anonymous RSS ' + fmt.bytes(G.anon_start) + ' \u2192 ' + fmt.bytes(G.anon_end) :
				     'RSS ' + fmt.bytes(G.rss_start) + ' \u2192 ' + fmt.bytes(G.rss_end))
			])
		]);
	}

	function gap(box, D) {
		var G = D.gap, s, what, rise;

		if (!G) {
			V.add(box, el('p', { class: 'note' }, 'No resident-memory samples: the gap check needs RSS samples ' +
				'(MEMPROV_RSS_INTERVAL_MS).'));
			return;
		}
		s = 'From ' + fmt.time(G.from_ns) + ' to ' + fmt.time(G.to_ns) + ': RSS ' + fmt.bytes(G.rss_start) + ' \u2192 ' +
			fmt.bytes(G.rss_end) + ', tracked host memory ' + fmt.bytes(G.tracked_start) + ' \u2192 ' +
			fmt.bytes(G.tracked_end) + '. ';
		if (G.basis === 'anonymous')
			s += 'Anonymous RSS (less the pages of files: libraries, the trace) ' + fmt.bytes(G.anon_start) +
				' \u2192 ' + fmt.bytes(G.anon_end) + '. ';
		what = G.basis === 'anonymous' ? 'anonymous RSS' : 'RSS';
		rise = G.basis === 'anonymous' ? G.anon_growth : G.rss_growth;
		if (G.flagged)
			s += 'Gap: ' + what + ' rose ' + fmt.bytesExact(G.gap_bytes) + ' more than tracked memory: ' +
				'allocator retention or untracked memory, not a leak at any site.';
		else if (rise <= 0 || G.gap_bytes <= 0)
			s += 'No gap: ' + what + ' did not rise more than tracked memory.';
		else if (G.gap_bytes < G.min_gap)
			s += 'No gap: ' + what + ' rose ' + fmt.bytesExact(G.gap_bytes) + ' more than tracked memory, ' +
				'under the minimum gap of ' + fmt.bytes(G.min_gap) + '.';
		else
			s += 'No gap: ' + what + ' rose ' + fmt.bytesExact(G.gap_bytes) + ' more than tracked memory, ' +
				'under half of its rise (' + fmt.bytes(rise) + '): tracked memory explains most of it.';
		V.add(box, el('p', { class: G.flagged ? 'note gap' : 'note nogap' }, s));
	}

	/* Where growth started: its mark's label, the full 'mark #N "label"' when labels repeat. */
	function since(s) {
		var n = 0;

		if (s.start_label === null || s.start_label === undefined)
			return fmt.time(s.start_ns);
		MP.data.marks.forEach(function (m) { n += m.label === s.start_label; });
		return n > 1 ? s.start : s.start_label;
	}

	/* The growing sites: what no default rule explains, the rest behind a toggle. */
	function growth(box, D) {
		var u = D.unit, hideKept = true, t, nKept = D.suspects.filter(function (s) { return s.kept; }).length;
		var keptBox = el('input', { type: 'checkbox', 'data-opt': 'hideKeptGrowth' }), counts = el('p', { class: 'what' });

		function rows() {
			return D.suspects.filter(function (s) { return !hideKept || !s.kept; });
		}

		if (!judged(D)) {
			V.add(box, el('p', { class: 'note' }, 'Growth not judged: ' + (D.window ? D.window.points : 0) +
				' points in the window, at least 3 needed. Put a mark in the loop you suspect (memprov_mark, ' +
				'or memprov run --mark-on MODULE:FUNCTION), or let the program run longer.'));
			return null;
		}
		if (!D.suspects.length) {
			V.add(box, el('p', { class: 'note nogap' }, 'No site grows over ' + D.window.text + ' (' +
				D.window.points + ' points; least growth ' + fmt.bytes(D.min_bytes) + ').'));
			return null;
		}
		t = MP.view.table({
			cls: 'growth', page: 10, sortBy: 2,
			rows: rows(),
			empty: 'No unexplained growth: ' + fmt.count(nKept) + ' site' + (nKept === 1 ? '' : 's') +
				' grow only under the import machinery or in the interpreter\'s and libraries\' caches ' +
				'(untick the box to list them).',
			columns: [
				{ label: 'kind', cls: 'nowrap', cell: function (s) { return [el('span', { class: 'kind k-' + s.kind }, s.kind), ' ' + s.api]; },
				  value: function (s) { return s.kind + ' ' + s.api; }, sort: 'asc' },
				{ label: 'allocated at', cls: 'where', cell: function (s) {
					return [at(s), s.kept ? el('span', { class: 'badge', title: s.kept }, 'explained') : null];
				}, value: function (s) { return V.allocatedAt(s).fn; }, sort: 'asc' },
				{ label: 'growth', cls: 'num', cell: function (s) { return fmt.bytesSigned(s.growth_bytes); },
				  value: function (s) { return s.growth_bytes; } },
				{ label: 'per ' + u, cls: 'num', cell: function (s) { return fmt.bytes(Math.round(s.slope_bytes)); },
				  value: function (s) { return s.slope_bytes; } },
				{ label: 'blocks/' + u, cls: 'num', cell: function (s) { return fmt.rate(s.slope_blocks); },
				  value: function (s) { return s.slope_blocks; } },
				{ label: 'since', cls: 'nowrap', cell: since, value: function (s) { return s.start_ns; }, sort: 'asc' },
				{ label: 'live at end', cls: 'num', cell: function (s) { return fmt.bytes(s.end_bytes); },
				  value: function (s) { return s.end_bytes; } },
				{ label: 'blocks', cls: 'num', cell: function (s) { return fmt.count(s.end_blocks); },
				  value: function (s) { return s.end_blocks; } },
				{ label: 'confidence', cls: 'num', cell: function (s) { return s.confidence.toFixed(2); },
				  value: function (s) { return s.confidence; } }
			],
			detail: function (s) {
				return V.stack(s, 'Grew ' + fmt.bytesExact(s.growth_bytes) + ' over the window (from ' + s.start + '), ' +
					       fmt.bytesRate(s.slope_bytes) + ' and ' + fmt.rate(s.slope_blocks) + ' blocks per ' + u + '.' +
					       (s.kept ? ' Explained: ' + s.kept + '.' : ''));
			}
		});
		function refresh() {
			var r = rows();

			t.setRows(r);
			counts.textContent = fmt.count(r.length) + ' growing site' + (r.length === 1 ? '' : 's') +
				(hideKept && nKept ? '; ' + fmt.count(nKept) + ' explained by imports or caches hidden' : '') + '.';
		}
		keptBox.checked = true;
		keptBox.addEventListener('change', function () { hideKept = keptBox.checked; refresh(); });
		V.add(box, [nKept ? el('div', { class: 'toolbar' }, el('label', { class: 'opt', title: 'growth under the import ' +
			'machinery or in the interpreter\'s and libraries\' caches, as memprov check\'s default suppressions say' },
			[keptBox, ' hide growth explained by imports and caches (' + fmt.count(nKept) + ' sites)'])) : null, counts, t.el]);
		refresh();
		return t;
	}

	/* Reachability classes, worst first: index into a site's "reach" (bytes per class). */
	var REACH = [{ k: 4, name: 'definitely lost', cls: 'lost' }, { k: 3, name: 'indirectly lost', cls: 'lost' },
		     { k: 2, name: 'possibly lost', cls: 'maybe' }, { k: 1, name: 'still reachable', cls: 'reach' },
		     { k: 0, name: 'not classified', cls: 'reach' }];

	/* The class that holds most of a site's bytes (worst first on a tie), with its rank. */
	function reachOf(s) {
		var best = null, r = 0;

		if (!s.reach)
			return null;
		REACH.forEach(function (c, i) {
			if (s.reach[c.k] > 0 && (!best || s.reach[c.k] > s.reach[best.k])) {
				best = c;
				r = i;
			}
		});
		return best && { name: best.name, cls: best.cls, rank: r };
	}

	/* "7.6 MiB definitely lost, 300 B still reachable": a site's classes. */
	function reachText(s) {
		return REACH.filter(function (c) { return s.reach[c.k] > 0; }).map(function (c) {
			return fmt.bytesExact(s.reach[c.k]) + ' ' + c.name;
		}).join(', ');
	}

	/* A site's identity across the data's lists: kind, API and frames. */
	function key(s) {
		return s.kind + ' ' + s.api + ' ' + s.f.join(',');
	}

	/* Live at the end: per-kind filter, kept-on-purpose toggle, the table. */
	function leaks(box, D) {
		var growing = {};

		D.suspects.forEach(function (s) { if (!s.kept) growing[key(s)] = true; });
		return leakTable(box, D, growing);
	}

	function leakTable(box, D, growing) {
		var L = D.leaks, kinds = Object.keys(L.totals), kind = null, hideKept = true, t, bar, counts = el('p', { class: 'what' });
		var chips = el('span', { class: 'seg' }), keptBox = el('input', { type: 'checkbox', 'data-opt': 'hideKept' });
		var nKept = L.sites.filter(function (s) { return s.kept; }).length + L.omitted.kept_sites;

		function rows() {
			return L.sites.filter(function (s) {
				return (!kind || s.kind === kind) && (!hideKept || !s.kept);
			});
		}

		function refresh() {
			var r = rows(), tot = 0, omitted = L.omitted.sites + (hideKept ? 0 : L.omitted.kept_sites);

			r.forEach(function (s) { tot += s.bytes; });
			t.setRows(r);
			counts.textContent = fmt.count(r.length) + ' site' + (r.length === 1 ? '' : 's') + ', ' + fmt.bytesExact(tot) +
				(omitted ? '; ' + fmt.count(omitted) + ' smaller sites not in this page' : '') +
				(hideKept && nKept ? '; ' + fmt.count(nKept) + ' sites kept on purpose hidden' : '') + '.';
			Array.prototype.forEach.call(chips.children, function (b) {
				var k = b.getAttribute('data-kind') || null, x = k && L.totals[k];

				b.setAttribute('aria-pressed', k === kind ? 'true' : 'false');
				if (x)
					b.lastChild.textContent = ' ' + fmt.bytes(x.bytes + (hideKept ? 0 : x.kept_bytes));
			});
		}

		V.add(chips, el('button', { type: 'button', 'data-kind': '', onclick: function () { kind = null; refresh(); } }, 'all kinds'));
		kinds.forEach(function (k) {
			var x = L.totals[k];

			V.add(chips, el('button', { type: 'button', 'data-kind': k, onclick: function () { kind = k; refresh(); } },
					[el('span', { class: 'kind k-' + k }, k), ' ' + fmt.bytes(x.bytes + (hideKept ? 0 : x.kept_bytes))]));
		});
		keptBox.checked = true;
		keptBox.addEventListener('change', function () { hideKept = keptBox.checked; refresh(); });
		bar = el('div', { class: 'toolbar' }, [chips, nKept ? el('label', { class: 'opt', title: 'what memprov check\'s default ' +
			'suppressions explain: the interpreter\'s and libraries\' own state, imports, caches' },
			[keptBox, ' hide memory kept on purpose (' + fmt.count(nKept) + ' sites)']) : null]);
		t = MP.view.table({
			cls: 'leaks', page: 20, sortBy: 3,
			empty: 'Nothing unexplained is live here' + (nKept ? ': ' + fmt.count(nKept) + ' site' + (nKept === 1 ? '' : 's') +
				' of memory the interpreter and libraries keep on purpose (imports, module state, caches) ' +
				'are hidden; untick the box to list them.' : '.'),
			columns: [
				{ label: 'kind', cls: 'nowrap', cell: function (s) { return [el('span', { class: 'kind k-' + s.kind }, s.kind), ' ' + s.api]; },
				  value: function (s) { return s.kind + ' ' + s.api; }, sort: 'asc' },
				{ label: 'allocated at', cls: 'where', cell: function (s) {
					return [at(s), s.kept ? el('span', { class: 'badge', title: s.kept }, 'kept on purpose') : null,
						growing[key(s)] ? el('span', { class: 'badge grows', title: 'this site grows over the judged window' },
								     'growing') : null];
				}, value: function (s) { return V.allocatedAt(s).fn; }, sort: 'asc' },
				{ label: 'blocks', cls: 'num', cell: function (s) { return fmt.count(s.blocks); }, value: function (s) { return s.blocks; } },
				{ label: 'bytes', cls: 'num', cell: function (s) { return fmt.bytesExact(s.bytes); }, value: function (s) { return s.bytes; } }
			].concat(L.reach && L.reach.shown ? [{ label: 'at exit', cls: 'nowrap', cell: function (s) {
				var c = reachOf(s);

				return c ? el('span', { class: 'rc rc-' + c.cls, title: reachText(s) }, c.name) : '';
			}, value: function (s) { var c = reachOf(s); return c ? -c.rank : -9; } }] : []),
			rows: rows(),
			detail: function (s) {
				return V.stack(s, [s.kept ? 'Kept on purpose: ' + s.kept + '.' : '',
						   s.reach ? 'At exit: ' + reachText(s) + '.' : ''].join(' ').trim() || null);
			}
		});
		V.add(box, [bar, counts, t.el]);
		refresh();
		return t;
	}

	function main() {
		var D = JSON.parse(document.getElementById('memprov-data').textContent), app = document.getElementById('app');
		var st = document.getElementById('status'), tl, sec, gt, lt, fl, views = [];

		MP.data = D;
		header(app, D);
		sec = section('timeline', 'Timeline', 'tracked live memory per kind, resident memory, marks');
		V.add(app, sec);
		tl = MP.timeline.draw(sec, D);
		gap(sec, D);

		sec = section('growing', 'Growing sites', judged(D) ? 'over ' + D.window.text : null);
		V.add(app, sec);
		gt = growth(sec, D);

		sec = section('leaks', 'Live ' + instant(D), 'by allocation site; click a row for its stack');
		V.add(app, sec);
		lt = leaks(sec, D);

		if (D.suspects.length)
			views.push({ name: 'growth', label: 'growth', what: 'Growth of the growing sites over the window',
				     value: function (s) { return s.growth_bytes; }, sites: D.suspects });
		views.push({ name: 'live', label: 'live at end', what: 'Memory live ' + instant(D),
			     value: function (s) { return s.bytes; }, sites: D.leaks.sites });
		/* start where there is something unexplained to see */
		if (views.length > 1 && !D.suspects.some(function (s) { return !s.kept; }))
			views.reverse();
		sec = section('flame', 'Flame graph', 'callers above callees; click to zoom, hover for lines');
		V.add(app, sec);
		fl = MP.flame.create(sec, views);
		MP.page = { flame: fl, leaks: lt, growth: gt, timeline: tl };

		st.setAttribute('data-summary', 'timeline points ' + D.timeline.ns.length + ', series ' + tl.series +
				', marks labelled ' + tl.labelled + ' of ' + D.marks.length + ', suspects ' + D.suspects.length +
				', leak sites ' + D.leaks.sites.length + ', flame frames ' + fl.state.frames);
		st.setAttribute('data-ok', '1');
	}

	window.addEventListener('error', function (e) {
		var st = document.getElementById('status');

		if (st) {
			st.hidden = false;
			st.className = 'error';
			st.textContent = 'This page could not be drawn: ' + e.message;
		}
	});
	if (document.readyState === 'loading')
		document.addEventListener('DOMContentLoaded', main);
	else
		main();
})(window.MP = window.MP || {});
