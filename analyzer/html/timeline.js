/*
 * timeline.js - the timeline chart: tracked live bytes per kind and RSS
 * (dashed) over the run, on round axis ticks; the marks as labelled
 * lines (as many labels as fit, the rest on hover); the window growth
 * judged shaded; and a cursor that reads every series at the instant
 * under the mouse.
 */
(function (MP) {
	'use strict';

	var COLORS = { heap: '#2f6db5', mmap: '#2e9e5b', pinned: '#8e5cc2', device: '#d0453a',
		       managed: '#e08a1e', registered: '#8c6d4f' };
	var H = 320, L = 78, R = 16, T = 34, B = 30;

	/* The label a mark is shown with: its own, or with its number when repeated. */
	function markLabels(marks) {
		var seen = {};

		marks.forEach(function (m) { seen[m.label] = (seen[m.label] || 0) + 1; });
		return marks.map(function (m, i) {
			if (m.main_end)
				return 'end of __main__';
			return seen[m.label] > 1 ? m.label + ' #' + i : m.label;
		});
	}

	function series(D) {
		var tl = D.timeline, out = [], k;

		for (k in tl.kinds)
			out.push({ name: k, label: k + ' (tracked live)', ys: tl.kinds[k], color: COLORS[k] || '#555', dash: [] });
		if (tl.rss)
			out.push({ name: 'rss', label: 'RSS (resident)', ys: tl.rss, color: '#222', dash: [5, 3] });
		if (tl.anon)
			out.push({ name: 'anon', label: 'anonymous RSS (less file pages)', ys: tl.anon, color: '#888',
				   dash: [2, 3] });
		return out;
	}

	function draw(box, D) {
		var V = MP.view, fmt = MP.fmt, c = V.el('canvas', { class: 'chart', role: 'img' });
		var tip = V.el('div', { class: 'tip', hidden: true });
		var wrap = V.el('div', { class: 'chartwrap' }, [c, tip]);
		var tl = D.timeline, xs = tl.ns, S = series(D), labels = markLabels(D.marks);
		var maxY = 1, maxX = 1, W, g, dpr = window.devicePixelRatio || 1, yt, xt, placed = [];

		V.add(box, wrap);
		W = Math.max(480, wrap.clientWidth || 900);
		c.width = W * dpr;
		c.height = H * dpr;
		c.style.width = W + 'px';
		c.style.height = H + 'px';
		g = c.getContext('2d');
		g.scale(dpr, dpr);
		S.forEach(function (s) { s.ys.forEach(function (y) { if (y !== null && y > maxY) maxY = y; }); });
		xs.forEach(function (x) { if (x > maxX) maxX = x; });
		D.marks.forEach(function (m) { if (m.ns > maxX) maxX = m.ns; });
		yt = fmt.bytesTicks(maxY, 5);
		maxY = yt[yt.length - 1].v;
		xt = fmt.timeTicks(maxX, Math.max(3, Math.floor((W - L - R) / 110)));
		maxX = Math.max(maxX, 1);
		function X(v) { return L + (W - L - R) * v / maxX; }
		function Y(v) { return H - B - (H - T - B) * v / maxY; }

		g.fillStyle = '#fff';
		g.fillRect(0, 0, W, H);
		g.font = '11px system-ui, sans-serif';
		/* the judged window */
		if (D.window && D.window.points >= 3) {
			g.fillStyle = 'rgba(255, 196, 0, 0.16)';
			g.fillRect(X(D.window.from_ns), T, Math.max(2, X(D.window.to_ns) - X(D.window.from_ns)), H - T - B);
			g.fillStyle = '#8a6d00';
			if (X(D.window.from_ns) + 90 < W - R)
				g.fillText('judged window', X(D.window.from_ns) + 4, T + 12);
			else {
				g.textAlign = 'right';
				g.fillText('judged window', X(D.window.to_ns) - 4, T + 12);
				g.textAlign = 'left';
			}
		}
		/* axes */
		g.strokeStyle = '#e3e3e3';
		g.lineWidth = 1;
		g.fillStyle = '#555';
		g.textAlign = 'right';
		yt.forEach(function (t) {
			var y = Math.round(Y(t.v)) + 0.5;

			g.beginPath();
			g.moveTo(L, y);
			g.lineTo(W - R, y);
			g.stroke();
			g.fillText(t.label, L - 6, y + 4);
		});
		g.textAlign = 'center';
		xt.forEach(function (t) {
			if (t.v <= maxX * 1.0001)
				g.fillText(t.label, X(t.v), H - B + 16);
		});
		g.strokeStyle = '#999';
		g.beginPath();
		g.moveTo(L, H - B + 0.5);
		g.lineTo(W - R, H - B + 0.5);
		g.stroke();
		/* marks: a line each; labels left to right where they fit */
		g.textAlign = 'left';
		D.marks.forEach(function (m, i) {
			var x = Math.round(X(m.ns)) + 0.5, w = g.measureText(labels[i]).width, last = placed[placed.length - 1], left;

			g.strokeStyle = m.main_end ? 'rgba(120, 120, 120, 0.8)' : 'rgba(200, 120, 0, 0.45)';
			g.setLineDash(m.main_end ? [2, 2] : []);
			g.beginPath();
			g.moveTo(x, T - 4);
			g.lineTo(x, H - B);
			g.stroke();
			/* right of the line, or left of it at the right edge */
			left = x + w + 4 > W ? x - w - 2 : x + 2;

			if ((!last || left > last.end + 6) && left >= 0) {
				g.fillStyle = m.main_end ? '#555' : '#8a4b00';
				g.fillText(labels[i], left, T - 8);
				placed.push({ x: x, end: left + w, i: i });
			}
		});
		g.setLineDash([]);
		/* series */
		S.forEach(function (s) {
			var on = false, i;

			g.strokeStyle = s.color;
			g.lineWidth = 2;
			g.setLineDash(s.dash);
			g.beginPath();
			for (i = 0; i < xs.length; i++) {
				if (s.ys[i] === null) {
					on = false;
					continue;
				}
				if (on)
					g.lineTo(X(xs[i]), Y(s.ys[i]));
				else
					g.moveTo(X(xs[i]), Y(s.ys[i]));
				on = true;
			}
			g.stroke();
		});
		g.setLineDash([]);
		c.setAttribute('aria-label', 'tracked live memory per kind' + (tl.rss ? ' and RSS' : '') + ' over ' +
			       fmt.time(maxX) + ', ' + D.marks.length + ' marks');

		/* the cursor: nearest mark within 4 px, else the values at that instant */
		c.addEventListener('mousemove', function (e) {
			var r = c.getBoundingClientRect(), px = e.clientX - r.left, ns = (px - L) / (W - L - R) * maxX;
			var best = -1, bd = 5, i, lines;

			if (px < L || px > W - R) {
				tip.hidden = true;
				return;
			}
			D.marks.forEach(function (m, j) {
				var d = Math.abs(X(m.ns) - px);

				if (d < bd) {
					bd = d;
					best = j;
				}
			});
			if (best >= 0) {
				lines = ['mark ' + labels[best], 'at ' + fmt.time(D.marks[best].ns)];
			} else {
				for (i = 0; i + 1 < xs.length && xs[i + 1] <= ns; i++)
					;
				lines = ['at ' + fmt.time(xs.length ? xs[i] : 0)];
				S.forEach(function (s) {
					if (xs.length && s.ys[i] !== null)
						lines.push(s.label + ': ' + fmt.bytes(s.ys[i]));
				});
			}
			V.clear(tip);
			lines.forEach(function (l, j) { V.add(tip, j ? [V.el('br'), l] : l); });
			tip.hidden = false;
			tip.style.left = Math.min(px + 12, W - 220) + 'px';
			tip.style.top = Math.max(0, e.clientY - r.top - 10) + 'px';
		});
		c.addEventListener('mouseleave', function () { tip.hidden = true; });

		/* the legend */
		V.add(box, V.el('div', { class: 'legend' }, S.map(function (s) {
			return V.el('span', null, [V.el('i', { class: s.dash.length ? 'dash' : '', style: 'border-color:' + s.color }), s.label]);
		}).concat(D.marks.length ? [V.el('span', null, [V.el('i', { class: 'markkey' }),
			MP.fmt.count(D.n_marks) + ' mark' + (D.n_marks === 1 ? '' : 's') +
			(placed.length < D.marks.length ? ' (' + placed.length + ' labelled; hover for the others)' : '')])] : [])
			.concat(D.window && D.window.points >= 3 ? [V.el('span', null, [V.el('i', { class: 'winkey' }),
				'judged window: ' + D.window.text])] : [])));
		return { series: S.length, labelled: placed.length, marks: D.marks.length,
			 yticks: yt.map(function (t) { return t.label; }), xticks: xt.map(function (t) { return t.label; }) };
	}

	MP.timeline = { draw: draw };
})(window.MP = window.MP || {});
