// probe.js: run.sh inserts this at the end of a copy of a page, and headless Chromium's --dump-dom
// prints the DOM it leaves, with two pre elements at its end: reportcheck-visible holds the text a
// reader sees (each text node drawn with a box of its own: not inside a collapsed details element,
// hidden, transparent or outside the page), one node a line, in the page's order; reportcheck-cut
// the texts that run past the right edge of the window or of a box that clips them (overflow), so
// that part of them cannot be read without scrolling. reportcheck reads both (the last of each).
(function () {
	var seen = [], cut = [];
	var vw = document.documentElement.clientWidth;
	var walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
	for (var n = walk.nextNode(); n; n = walk.nextNode()) {
		var e = n.parentElement;
		if (!e || !n.textContent.trim() || e.closest('svg')) continue;
		if (!e.checkVisibility({contentVisibilityAuto: true, opacityProperty: true, visibilityProperty: true})) continue;
		var r = document.createRange();
		r.selectNodeContents(n);
		var rects = r.getClientRects(), right = 0, shown = false;
		for (var i = 0; i < rects.length; i++) {
			if (rects[i].width > 0 && rects[i].height > 0) { shown = true; right = Math.max(right, rects[i].right); }
		}
		if (!shown) continue;
		seen.push(n.textContent);
		var edge = vw;
		for (var a = e; a && a !== document.body; a = a.parentElement) {
			var ox = getComputedStyle(a).overflowX;
			if (ox !== 'visible') edge = Math.min(edge, a.getBoundingClientRect().right);
		}
		if (right > edge + 1) cut.push(n.textContent.trim().slice(0, 120) + ' (to x=' + Math.round(right) + ', edge ' + Math.round(edge) + ')');
	}
	var add = function (id, lines) {
		var p = document.createElement('pre');
		p.id = id;
		p.textContent = lines.join('\n');
		document.body.appendChild(p);
	};
	add('reportcheck-visible', seen);
	add('reportcheck-cut', cut);
})();
