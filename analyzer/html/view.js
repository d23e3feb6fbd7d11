/*
 * view.js - DOM helpers and the page's table: sortable columns (click a
 * heading; again to reverse), a row that opens to show its site's full
 * stack, and the first rows only with "show more" buttons, so a trace
 * with thousands of sites gives a page of sensible size.
 */
(function (MP) {
	'use strict';

	/* el('td', {class: 'num', title: 'x'}, 'text' or node or [children]) */
	function el(tag, attrs, kids) {
		var e = document.createElement(tag), k;

		for (k in attrs || {}) {
			if (k === 'class')
				e.className = attrs[k];
			else if (k.slice(0, 2) === 'on')
				e.addEventListener(k.slice(2), attrs[k]);
			else if (attrs[k] !== undefined && attrs[k] !== null && attrs[k] !== false)
				e.setAttribute(k, attrs[k] === true ? '' : attrs[k]);
		}
		add(e, kids);
		return e;
	}

	function add(e, kids) {
		if (kids === undefined || kids === null)
			return e;
		if (!Array.isArray(kids))
			kids = [kids];
		kids.forEach(function (k) {
			if (k === undefined || k === null || k === false)
				return;
			e.appendChild(typeof k === 'object' ? k : document.createTextNode(String(k)));
		});
		return e;
	}

	function clear(e) {
		while (e.firstChild)
			e.removeChild(e.firstChild);
		return e;
	}

	/* A frame of the data's table, as words: {name, file, line, type, module}. */
	function frame(i) {
		var f = MP.data.frames[i];

		return { id: i, name: f[0], file: f[1], line: f[2], type: f[3], module: f[4] };
	}

	/* "function file:line" pieces of frame i, for one line of a stack. */
	function frameLine(i) {
		var f = frame(i), where = f.file ? f.file + (f.line ? ':' + f.line : '') :
			(f.module ? MP.fmt.base(f.module) : '');

		return el('li', { class: 'fr fr-' + f.type, title: f.module || null }, [
			el('span', { class: 'fn' }, f.name), where ? ' ' : null,
			where ? el('span', { class: 'loc' }, where) : null
		]);
	}

	/*
	 * Where a site's memory was allocated, in one line: the innermost
	 * Python frame, else the innermost native frame with a source line,
	 * else the innermost frame. {text, title}.
	 */
	function allocatedAt(site) {
		var f = site.f, i, fr;

		for (i = 0; i < f.length; i++) {
			fr = frame(f[i]);
			if (i < site.np || (fr.file && fr.line))
				return { fn: fr.name, loc: fr.file ? MP.fmt.base(fr.file) + ':' + fr.line : '',
					 title: (fr.file || '') + (fr.line ? ':' + fr.line : '') };
		}
		if (!f.length)
			return { fn: '(no stack recorded)', loc: '', title: '' };
		fr = frame(f[0]);
		return { fn: fr.name, loc: fr.module ? MP.fmt.base(fr.module) : '', title: fr.module || '' };
	}

	/* The full stack of a site: Python frames, then native ones, innermost first. */
	function stack(site, note) {
		var py = site.f.slice(0, site.np), nat = site.f.slice(site.np), box = el('div', { class: 'stack' });

		if (note)
			add(box, el('p', { class: 'kept-note' }, note));
		if (py.length)
			add(box, [el('h4', null, 'Python frames, innermost first'), el('ol', null, py.map(frameLine))]);
		if (nat.length)
			add(box, [el('h4', null, (py.length ? 'then native frames' : 'Native frames') + ', innermost first'),
				  el('ol', null, nat.map(frameLine))]);
		if (!site.f.length)
			add(box, el('p', null, 'No stack was recorded for this memory.'));
		return box;
	}

	/*
	 * A table. opts: columns [{label, cls, value(row) for sorting,
	 * cell(row) -> text or node, sort: 'asc'|'desc' first}], rows,
	 * sortBy (a column index), desc, detail(row) -> node (the row opens
	 * to show it), page (rows shown before "show more"), empty (text).
	 * Returns {el, setRows(rows)}.
	 */
	function table(opts) {
		var cols = opts.columns, rows = opts.rows || [], shown = opts.page || 20;
		var sortBy = opts.sortBy, desc = opts.desc !== false, open = {};
		var thead = el('thead'), tbody = el('tbody'), foot = el('div', { class: 'more' });
		var t = el('table', { class: 'data' + (opts.cls ? ' ' + opts.cls : '') }, [thead, tbody]);
		var box = el('div', { class: 'tablebox' }, [t, foot]);
		var order = [];

		function sorted() {
			var c = cols[sortBy], idx = rows.map(function (r, i) { return i; });

			if (c && c.value)
				idx.sort(function (a, b) {
					var x = c.value(rows[a]), y = c.value(rows[b]);

					if (x === y)
						return a - b;
					return (x < y ? -1 : 1) * (desc ? -1 : 1);
				});
			return idx;
		}

		function head() {
			var tr = el('tr');

			if (opts.detail)
				add(tr, el('th', { class: 'tog', 'aria-label': 'open' }));
			cols.forEach(function (c, i) {
				var th = el('th', { class: (c.cls || '') + (c.value ? ' sortable' : ''), scope: 'col',
						    'aria-sort': i === sortBy ? (desc ? 'descending' : 'ascending') : null },
					    [c.label, i === sortBy ? el('span', { class: 'arrow' }, desc ? ' \u25be' : ' \u25b4') : null]);

				if (c.value)
					th.addEventListener('click', function () {
						if (sortBy === i)
							desc = !desc;
						else
							desc = c.sort !== 'asc', sortBy = i;
						render();
					});
				add(tr, th);
			});
			add(clear(thead), tr);
		}

		function row(i) {
			var r = rows[i], tr = el('tr', { class: 'row' + (open[i] ? ' open' : '') }), frag = [tr];

			if (opts.detail) {
				add(tr, el('td', { class: 'tog' }, el('button', { class: 'tog', type: 'button',
					'aria-expanded': open[i] ? 'true' : 'false', title: 'show the full stack' },
					open[i] ? '\u25be' : '\u25b8')));
				tr.addEventListener('click', function (e) {
					if (e.target.closest && e.target.closest('a'))
						return;
					open[i] = !open[i];
					render();
				});
			}
			cols.forEach(function (c) {
				add(tr, el('td', { class: c.cls || '' }, c.cell(r)));
			});
			if (opts.detail && open[i])
				frag.push(el('tr', { class: 'detail' }, el('td', { colspan: cols.length + 1 }, opts.detail(r))));
			return frag;
		}

		function render() {
			var n;

			head();
			clear(tbody);
			clear(foot);
			order = sorted();
			n = Math.min(shown, order.length);
			order.slice(0, n).forEach(function (i) { add(tbody, row(i)); });
			thead.hidden = !order.length;
			if (!order.length)
				add(tbody, el('tr', null, el('td', { class: 'empty', colspan: cols.length + 1 }, opts.empty || 'none')));
			if (n < order.length) {
				add(foot, [el('span', null, 'showing ' + MP.fmt.count(n) + ' of ' + MP.fmt.count(order.length) + ' '),
					el('button', { type: 'button', class: 'show-more', onclick: function () {
						shown += opts.page || 20;
						render();
					} }, 'show ' + Math.min(opts.page || 20, order.length - n) + ' more'),
					el('button', { type: 'button', class: 'show-all', onclick: function () {
						shown = order.length;
						render();
					} }, 'show all')]);
			}
		}

		render();
		return {
			el: box,
			setRows: function (r) {
				rows = r;
				open = {};
				shown = opts.page || 20;
				render();
			},
			count: function () { return rows.length; }
		};
	}

	MP.view = { el: el, add: add, clear: clear, frame: frame, allocatedAt: allocatedAt,
		    stack: stack, table: table };
})(window.MP = window.MP || {});
