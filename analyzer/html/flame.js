/*
 * flame.js - the flame graph (an icicle: callers above callees) of a
 * list of sites, each with its frames and a value (bytes live at the end,
 * or growth over the window). Frames of one function in one file merge
 * into one box whatever their line; the lines and what each holds show
 * on hover. Filters rebuild the tree: without the interpreter's and the
 * import machinery's frames, and without the native frames under a
 * Python frame; memory that the gate's default suppressions explain
 * (imports, caches) is left out unless asked for. A run of frames that
 * all hold the same memory (one call chain) folds into one box; click it
 * to unfold. Search marks the boxes whose function or file holds the
 * text and totals their memory (a box inside another match is counted
 * once). Click a box to zoom into it; the breadcrumb and Reset go back.
 */
(function (MP) {
	'use strict';

	var ROW = 18;

	/* The frames of site s from the outermost in, after the filters. */
	function path(s, opt) {
		var py = s.f.slice(0, s.np).reverse(), nat = s.f.slice(s.np).reverse(), ids;

		if (opt.hideNative && py.length)
			nat = [];
		ids = py.concat(nat);
		if (opt.hideInterp)
			ids = ids.filter(function (i) {
				var t = MP.data.frames[i][3];

				return t !== 'i' && t !== 'x';
			});
		return ids;
	}

	/* The tree of sites: {name, file, type, v, lines {line: v}, kids [], parent}. */
	function build(sites, value, opt) {
		var root = { name: 'all', file: null, type: 'r', v: 0, lines: {}, map: {}, kids: [], parent: null };

		sites.forEach(function (s) {
			var v = value(s), node = root;

			if (!(v > 0) || (s.kept && !opt.includeKept))
				return;
			root.v += v;
			path(s, opt).forEach(function (i) {
				var f = MP.data.frames[i], key = f[0] + '\u0000' + (f[1] || f[4] || ''), c = node.map[key];

				if (!c) {
					c = { name: f[0], file: f[1], module: f[4], type: f[3], v: 0, lines: {}, map: {}, kids: [], parent: node };
					node.map[key] = c;
					node.kids.push(c);
				}
				c.v += v;
				if (f[2])
					c.lines[f[2]] = (c.lines[f[2]] || 0) + v;
				node = c;
			});
		});
		(function sort(n) {
			n.kids.sort(function (a, b) { return b.v - a.v || (a.name < b.name ? -1 : 1); });
			n.kids.forEach(sort);
		})(root);
		return root;
	}

	function hue(s) {
		var h = 0, i;

		for (i = 0; i < s.length; i++)
			h = (h * 31 + s.charCodeAt(i)) % 997;
		return h;
	}

	/* Python frames warm, native ones cool, the interpreter's grey. */
	function color(n) {
		var h = hue(n.name);

		switch (n.type) {
		case 'p': return 'hsl(' + (28 + h % 26) + ', 85%, ' + (62 + h % 12) + '%)';
		case 'n': return 'hsl(' + (200 + h % 30) + ', 55%, ' + (70 + h % 10) + '%)';
		case 'r': return '#d9d9d9';
		default: return 'hsl(0, 0%, ' + (78 + h % 8) + '%)';
		}
	}

	function matches(n, q) {
		return !!q && (n.name.toLowerCase().indexOf(q) >= 0 ||
			       (n.file && n.file.toLowerCase().indexOf(q) >= 0));
	}

	/* Total value of the matches, each counted once (not under another match). */
	function searchTotal(n, q, acc) {
		if (n.type !== 'r' && matches(n, q)) {
			acc.v += n.v;
			acc.frames++;
			countInside(n, q, acc);
			return acc;
		}
		n.kids.forEach(function (k) { searchTotal(k, q, acc); });
		return acc;
	}

	function countInside(n, q, acc) {
		n.kids.forEach(function (k) {
			if (matches(k, q))
				acc.frames++;
			countInside(k, q, acc);
		});
	}

	function where(n) {
		var ls = Object.keys(n.lines).map(Number).sort(function (a, b) { return n.lines[b] - n.lines[a]; });
		var f = n.file || n.module;

		return { file: f, lines: ls };
	}

	/*
	 * The flame graph in box. views: [{name, label, sites, value(site),
	 * what}] (what the values mean); the first view is shown. Returns
	 * the controls' state for the page: {setView, search, toggle, ...}.
	 */
	function create(box, views) {
		var V = MP.view, fmt = MP.fmt, el = V.el;
		var opt = { hideNative: true, hideInterp: false, includeKept: false, fold: true }, view = views[0], q = '';
		var root, zoom, graph = el('div', { class: 'flame', role: 'tree' });
		var tip = el('div', { class: 'tip', hidden: true }), crumbs = el('nav', { class: 'crumbs', 'aria-label': 'zoom' });
		var info = el('span', { class: 'found', 'aria-live': 'polite' }), what = el('p', { class: 'what' });
		var input = el('input', { type: 'search', placeholder: 'search functions and files', 'aria-label': 'search the flame graph',
					  size: 28 });
		var state = { frames: 0, matched: 0, matchedBytes: 0, depth: 0 };
		var tabs = el('span', { class: 'seg' }), bar, narrow = el('p', { class: 'small' });

		function checkbox(label, key, title) {
			var c = el('input', { type: 'checkbox', 'data-opt': key });

			c.checked = opt[key];
			c.addEventListener('change', function () {
				opt[key] = c.checked;
				rebuild();
			});
			return el('label', { class: 'opt', title: title }, [c, ' ' + label]);
		}

		views.forEach(function (v) {
			V.add(tabs, el('button', { type: 'button', 'data-view': v.name, 'aria-pressed': v === view ? 'true' : 'false',
						   onclick: function () { setView(v.name); } }, v.label));
		});
		bar = el('div', { class: 'toolbar' }, [views.length > 1 ? tabs : null, input, info,
			checkbox('hide interpreter & import frames', 'hideInterp',
				 'leave out the Python interpreter\'s own native frames and importlib\'s Python frames'),
			checkbox('hide native frames under Python', 'hideNative',
				 'for memory allocated under Python code, show the Python frames only'),
			checkbox('include memory kept on purpose', 'includeKept',
				 'also the memory that memprov check\'s default suppressions explain: imports, the interpreter\'s and libraries\' state'),
			checkbox('fold call chains', 'fold', 'a run of frames that all hold the same memory is one box'),
			el('button', { type: 'button', class: 'reset', onclick: function () { zoomTo(root); } }, 'Reset zoom')]);
		V.add(box, [bar, what, crumbs, el('div', { class: 'flamewrap' }, [graph, tip]), narrow]);
		input.addEventListener('input', function () {
			q = input.value.trim().toLowerCase();
			render();
		});

		function setView(name) {
			views.forEach(function (v) { if (v.name === name) view = v; });
			Array.prototype.forEach.call(tabs.children, function (b) {
				b.setAttribute('aria-pressed', b.getAttribute('data-view') === name ? 'true' : 'false');
			});
			rebuild();
		}

		function rebuild() {
			var names = [], n, found = null;

			/* keep the zoom on the same frames when the tree is rebuilt */
			for (n = zoom; n && n.parent; n = n.parent)
				names.unshift(n.name + '\u0000' + (n.file || n.module || ''));
			root = build(view.sites, view.value, opt);
			zoom = root;
			names.forEach(function (k) {
				if (zoom.map[k]) {
					zoom = zoom.map[k];
					found = zoom;
				}
			});
			zoom = found || root;
			what.textContent = view.what + ': ' + fmt.bytesExact(root.v) + ' in all.';
			render();
		}

		function zoomTo(n) {
			zoom = n;
			render();
		}

		function showTip(e, n) {
			var w = where(n), lines = [], total = root.v || 1, r = graph.getBoundingClientRect();

			V.clear(tip);
			V.add(tip, el('b', null, n.name));
			if (w.file)
				V.add(tip, [el('br'), w.file]);
			w.lines.slice(0, 8).forEach(function (l) {
				lines.push('line ' + l + ': ' + fmt.bytes(n.lines[l]));
			});
			if (w.lines.length > 8)
				lines.push((w.lines.length - 8) + ' more lines');
			lines.forEach(function (l) { V.add(tip, [el('br'), l]); });
			V.add(tip, [el('br'), el('b', null, fmt.bytesExact(n.v)), ', ' + (100 * n.v / total).toFixed(1) + '% of all']);
			tip.hidden = false;
			tip.style.left = Math.min(e.clientX - r.left + 14, graph.clientWidth - 300) + 'px';
			tip.style.top = (e.clientY - r.top + 18) + 'px';
		}

		function box1(n, x, w, d, anc) {
			var hit = matches(n, q), label = n.name + (n.type !== 'r' && n.file ? '  ' + fmt.base(n.file) : '');
			var e = el('div', { class: 'fb t-' + n.type + (anc ? ' anc' : '') + (hit ? ' hit' : '') + (q && !hit ? ' dim' : ''),
					    role: 'treeitem', 'data-name': n.name,
					    style: 'left:' + x.toFixed(2) + 'px;width:' + Math.max(w - 1, 1).toFixed(2) + 'px;top:' + (d * ROW) + 'px;' +
						   'background:' + (hit ? '' : color(n)) },
				   w > 30 ? label : '');

			e.addEventListener('click', function () { zoomTo(n); });
			e.addEventListener('mousemove', function (ev) { showTip(ev, n); });
			e.addEventListener('mouseleave', function () { tip.hidden = true; });
			graph.appendChild(e);
			state.frames++;
			if (hit)
				state.matched++;
		}

		/*
		 * The frames below nd that hold all of nd's memory that shows:
		 * a single callee (others under half a pixel wide) each time.
		 */
		function chain(nd, w) {
			var run = [], n = nd, k;

			for (;;) {
				k = n.kids[0];
				if (!k || w * (n.v - k.v) / n.v >= 0.5 || !k.kids.length)
					return run;
				run.push(k);
				n = k;
			}
		}

		function folded(run, x, w, d) {
			var hit = run.some(function (n) { return matches(n, q); });
			var text = '\u22ef ' + run.length + ' frames: ' + run[0].name + ' \u203a \u2026 \u203a ' + run[run.length - 1].name;
			var e = el('div', { class: 'fb fold' + (hit ? ' hit' : '') + (q && !hit ? ' dim' : ''), role: 'treeitem',
					    title: run.map(function (n) { return n.name; }).join(' \u203a ') + ' (click to unfold)',
					    style: 'left:' + x.toFixed(2) + 'px;width:' + Math.max(w - 1, 1).toFixed(2) + 'px;top:' + (d * ROW) + 'px' },
				   w > 30 ? text : '');

			e.addEventListener('click', function () {
				opt.fold = false;
				Array.prototype.forEach.call(bar.querySelectorAll('input[data-opt=fold]'), function (c) { c.checked = false; });
				render();
			});
			graph.appendChild(e);
			state.frames++;
			state.folded = run.length;
		}

		function render() {
			var W = graph.clientWidth || 900, anc = [], n, d = 0, total;

			V.clear(graph);
			state.frames = state.matched = state.folded = state.narrow = 0;
			state.depth = 0;
			for (n = zoom; n; n = n.parent)
				anc.unshift(n);
			/* the path down to the zoomed frame, full width, then its subtree */
			anc.slice(0, -1).forEach(function (a) { box1(a, 0, W, d++, true); });
			(function walk(nd, x, w, dd) {
				var cx = x, run = opt.fold ? chain(nd, w) : [];

				if (!nd.v)
					return;
				if (w < 0.6) {
					state.narrow++;
					return;
				}
				if (dd > state.depth)
					state.depth = dd;
				box1(nd, x, w, dd, false);
				if (run.length >= 3) {
					/* one box for the chain below nd, then its last frame's callees */
					folded(run, x, w, dd + 1);
					nd = run[run.length - 1];
					dd += 1;
				}
				nd.kids.forEach(function (k) {
					var kw = w * k.v / nd.v;

					walk(k, cx, kw, dd + 1);
					cx += kw;
				});
			})(zoom, 0, W, d);
			if (!root.v)
				V.add(graph, el('p', { class: 'empty' }, 'Nothing to show in this view' + (opt.includeKept ? '.' :
					': tick "include memory kept on purpose" to see the memory the interpreter and libraries keep.')));
			graph.style.height = root.v ? ((state.depth + 1) * ROW + 2) + 'px' : 'auto';
			narrow.textContent = state.narrow ? fmt.count(state.narrow) + ' smaller call' + (state.narrow === 1 ? '' : 's') +
				' too narrow to draw at this zoom: click a box to zoom in, or search for them.' : '';
			/* breadcrumb */
			V.clear(crumbs);
			anc.forEach(function (a, i) {
				if (i)
					V.add(crumbs, el('span', { class: 'sep' }, ' \u203a '));
				V.add(crumbs, i === anc.length - 1 ? el('span', { class: 'here' }, a.name) :
				      el('a', { href: '#', onclick: function (e) { e.preventDefault(); zoomTo(a); } }, a.name));
			});
			/* the search's total */
			total = q ? searchTotal(root, q, { v: 0, frames: 0 }) : null;
			state.matchedBytes = total ? total.v : 0;
			info.textContent = !q ? '' : !total.frames ? 'no match' :
				total.frames + ' frame' + (total.frames === 1 ? '' : 's') + ' match: ' + fmt.bytesExact(total.v) +
				', ' + (100 * total.v / (root.v || 1)).toFixed(1) + '% of all';
		}

		rebuild();
		return {
			state: state, opt: opt, setView: setView, input: input,
			search: function (text) {
				input.value = text;
				input.dispatchEvent(new Event('input'));
			},
			root: function () { return root; },
			zoom: function () { return zoom; }
		};
	}

	MP.flame = { create: create, build: build };
})(window.MP = window.MP || {});
