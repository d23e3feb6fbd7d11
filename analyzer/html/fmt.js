/*
 * fmt.js - how the page writes numbers, the same way as memprov's text
 * reports (analyzer/util.c): integer bytes, one human figure with the
 * exact one where it matters ("300 B", "7.6 MiB (8,000,000 B)"), rates
 * rounded, thousands separators, "µs"; and round axis ticks for bytes
 * and time. Everything hangs off window.MP, the page's one global.
 */
(function (MP) {
	'use strict';

	var UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

	/* 8000000 -> "8,000,000"; a fraction is rounded first. */
	function count(n) {
		var s = String(Math.round(Math.abs(n))), out = '';

		while (s.length > 3) {
			out = ',' + s.slice(-3) + out;
			s = s.slice(0, -3);
		}
		return (n < 0 && Math.round(n) !== 0 ? '-' : '') + s + out;
	}

	/* "300 B", "7.6 MiB": one figure, bytes under 1 KiB exact. */
	function bytes(n) {
		var v = Math.abs(Math.round(n)), i = 1, sign = n < 0 && v ? '-' : '', tenths;

		if (v < 1024)
			return sign + count(v) + ' B';
		v /= 1024;
		/* in tenths, as printed: 1023.96 KiB is 1.0 MiB, not 1024.0 KiB */
		while (Math.round(v * 10) >= 10240 && i + 1 < UNITS.length) {
			v /= 1024;
			i++;
		}
		tenths = Math.round(v * 10);
		return sign + count(Math.floor(tenths / 10)) + '.' + (tenths % 10) + ' ' + UNITS[i];
	}

	/* "300 B" or "7.6 MiB (8,000,000 B)": the exact figure when rounded. */
	function bytesExact(n) {
		var h = bytes(n);

		return Math.abs(n) < 1024 ? h : h + ' (' + count(n) + ' B)';
	}

	/* "+7.6 MiB", "-300 B", "0 B". */
	function bytesSigned(n) {
		return (n > 0 ? '+' : '') + bytes(n);
	}

	/* A rate (per mark, per second): rounded; "<1" for a positive one under 0.5. */
	function rate(v) {
		if (v > 0 && v < 0.5)
			return '<1';
		if (v < 0 && v > -0.5)
			return '>-1';
		return count(v);
	}

	/* A byte rate: "22.9 MiB", with the exact rounded figure past 1 KiB. */
	function bytesRate(v) {
		if (v > 0 && v < 0.5)
			return '<1 B';
		return bytesExact(Math.round(v));
	}

	/* "850 ns", "12.5 µs", "3.2 ms", "5.190 s". */
	function time(ns) {
		ns = Math.max(0, Math.round(ns));
		if (ns < 1e3)
			return ns + ' ns';
		if (ns < 1e6)
			return (ns / 1e3).toFixed(1) + ' \u00b5s';
		if (ns < 1e9)
			return (ns / 1e6).toFixed(1) + ' ms';
		return (ns / 1e9).toFixed(3) + ' s';
	}

	function trim(x) {
		return String(+x.toFixed(2));
	}

	/*
	 * Ticks for bytes from 0 to max, at most n+1: steps of 1, 2, 4 or 8
	 * times a power of 1024 times a power of 2 ("256 MiB", "512 MiB",
	 * "768 MiB", "1 GiB"), each label in the largest unit it reaches.
	 */
	function bytesTicks(max, n) {
		var step = 1, ticks = [], v;

		if (!(max > 0))
			max = 1;
		while (max / step > n)
			step *= 2;
		for (v = 0; v <= max + step * 1e-9; v += step)
			ticks.push({ v: v, label: bytesTick(v) });
		if (ticks[ticks.length - 1].v < max)
			ticks.push({ v: v, label: bytesTick(v) });
		return ticks;
	}

	function bytesTick(v) {
		var i = 0;

		while (i + 1 < UNITS.length && v >= Math.pow(1024, i + 1))
			i++;
		return (i ? trim(v / Math.pow(1024, i)) : String(v)) + ' ' + UNITS[i];
	}

	/*
	 * Ticks for a time span [0, max] ns: steps of 1, 2 or 5 times a power
	 * of ten, labels in the step's unit ("0 s", "0.5 s", "1 s").
	 */
	function timeTicks(max, n) {
		var step = 1, ticks = [], k = 0, unit, name, v;

		if (!(max > 0))
			max = 1;
		while (max / step > n) {
			step *= [2, 2.5, 2][k % 3];
			k++;
		}
		if (step >= 1e9) {
			unit = 1e9; name = ' s';
		} else if (step >= 1e6) {
			unit = 1e6; name = ' ms';
		} else if (step >= 1e3) {
			unit = 1e3; name = ' \u00b5s';
		} else {
			unit = 1; name = ' ns';
		}
		if (unit === 1e6 && max >= 1e9)
			unit = 1e9, name = ' s';
		for (v = 0; v <= max + step * 1e-9; v += step)
			ticks.push({ v: v, label: trim(v / unit) + name });
		return ticks;
	}

	/* The last part of a path: "parray.py" for "/src/parla/parray.py". */
	function base(path) {
		return path ? String(path).replace(/.*\//, '') : path;
	}

	MP.fmt = {
		count: count, bytes: bytes, bytesExact: bytesExact, bytesSigned: bytesSigned,
		rate: rate, bytesRate: bytesRate, time: time, bytesTicks: bytesTicks,
		timeTicks: timeTicks, base: base
	};
})(window.MP = window.MP || {});
