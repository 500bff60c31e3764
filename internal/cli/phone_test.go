package cli_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/dupctl/dupctl/internal/testenv"
)

// phoneFit is what a phone shows of a page: the text a reader would have
// to scroll sideways for.
type phoneFit struct {
	Width       float64  // the window's width
	ScrollWidth float64  // the document's
	Off         []string // text elements past the window's right (or left) edge
	Clipped     []string // text containers whose content is wider than their box
	Cards       int      // table rows laid out as cards
	// Unlabelled are the cells of a card with text and no column name;
	// MessageNotFirst the findings' cards whose message is not on top.
	Unlabelled      []string
	MessageNotFirst int
}

// phoneJS reads phoneFit back. A picture box - a .scroll holding an SVG,
// a drawn <pre> or a grid table (the matrix, the broker's topology) - may
// scroll sideways: what is inside it is a picture, not text to read, and
// is skipped; so are SVG text and text in closed <details>.
const phoneJS = `(() => {
  const W = window.innerWidth;
  const pictureBox = el => el.matches('.scroll') &&
    !!el.querySelector(':scope > svg, :scope > pre, :scope > table.matrix, :scope > table.topology');
  const inPicture = el => { for (let p = el; p; p = p.parentElement) if (pictureBox(p)) return true; return false; };
  const hidden = el => el.closest('svg') || el.closest('details:not([open]) > :not(summary)') || el.closest('head');
  const name = el => {
    const r = el.getBoundingClientRect();
    const text = (el.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 40);
    return el.tagName.toLowerCase() + (el.className && typeof el.className === 'string' ? '.' + el.className.split(' ')[0] : '') +
      ' "' + text + '" ' + Math.round(r.left) + '..' + Math.round(r.right) + 'px';
  };
  const off = [], clipped = [];
  const cards = [...document.querySelectorAll('tbody > tr')].filter(tr => !inPicture(tr) && getComputedStyle(tr).display !== 'table-row');
  for (const el of document.querySelectorAll('body *')) {
    if (hidden(el) || inPicture(el)) continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    const ownText = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    if (ownText && (r.right > W + 0.5 || r.left < -0.5)) off.push(name(el));
    if (el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 1)
      clipped.push(name(el) + ' scrolls ' + el.scrollWidth + ' in ' + el.clientWidth);
  }
  return {
    Width: W, ScrollWidth: document.documentElement.scrollWidth, Off: off, Clipped: clipped,
    Cards: cards.length,
    Unlabelled: cards.flatMap(tr => [...tr.children]).filter(c => c.textContent.trim() && !c.dataset.label).map(name),
    MessageNotFirst: cards.filter(tr => tr.querySelector(':scope > td.message') &&
      [...tr.children].some(c => c.getBoundingClientRect().top <
        tr.querySelector(':scope > td.message').getBoundingClientRect().top)).length,
  };
})()`

// TestPhonePagesInChromium opens the HTML of the commands with wide
// tables on a 390x844 phone, light and dark, and fails when any text
// element lies off screen to the right or is clipped in its box (a table
// scrolling sideways in its box counts: the reader would have to scroll
// to read it), or the page is wider than the phone. Pictures keep their
// own sideways scroll and are not counted. Besides, every page holds what
// checkScreen holds (no request out, no console error, dark when asked).
func TestPhonePagesInChromium(t *testing.T) {
	browser := newTab(t)
	at := scriptFiles(t)
	prefix, redisURL := seedLocks(t)
	dlq := loadDLQ(t, at("dlq-stats-groups.txtar", "dlq.jsonl"))
	fleet := at("audit-logs.txtar", "fleet.log")
	dir := t.TempDir()
	cases := []struct {
		name string
		args []string
	}{
		{"simulate-crash", []string{"simulate", "crash"}},
		{"simulate-lock-expiry", []string{"simulate", "lock-expiry"}},
		{"simulate-matrix", []string{"simulate", "matrix", "crash", "lock-expiry"}},
		{"audit-logs", []string{"audit", "logs", fleet}},
		{"audit-incident", []string{"audit", "logs", fleet, "--incident", "ord-0000010"}},
		{"doctor", []string{"doctor", "--config", at("doctor-offline.txtar", "naive.yaml")}},
		{"inspect-lock", []string{"inspect", "lock", "--redis-url", redisURL, "--pattern", prefix + ":*", "-v"}},
		{"dlq-stats", []string{"dlq", "stats", "--queue", dlq, "--amqp-url", testenv.AMQP.ConnURL()}},
		{"dlq-replay", []string{"dlq", "replay", "--queue", dlq, "--amqp-url", testenv.AMQP.ConnURL()}},
	}
	phone := []view{{390, false}, {390, true}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(dir, c.name+".html")
			runToFile(t, append(c.args, "--html", file, "--fail-on", "none")...)
			browser.browse(t, file, c.name, phone, func(t *testing.T, v view, p page) {
				checkScreen(t, v, p)
				fit := p.fit
				t.Logf("%s: %d text elements off screen, %d clipped, %d rows as cards, page %.0fpx wide", v, len(fit.Off), len(fit.Clipped),
					fit.Cards, fit.ScrollWidth)
				if fit.ScrollWidth > fit.Width {
					t.Errorf("the page is %.0fpx wide on a %.0fpx phone", fit.ScrollWidth, fit.Width)
				}
				if len(fit.Off) > 0 {
					t.Errorf("%d text elements off screen: %s", len(fit.Off), strings.Join(fit.Off[:min(len(fit.Off), 8)], "; "))
				}
				if fit.Cards == 0 && c.name != "simulate-matrix" {
					t.Error("no table is laid out as cards at 390 px")
				}
				if len(fit.Unlabelled) > 0 {
					t.Errorf("%d cells in cards without their column's name: %s", len(fit.Unlabelled),
						strings.Join(fit.Unlabelled[:min(len(fit.Unlabelled), 8)], "; "))
				}
				if fit.MessageNotFirst > 0 {
					t.Errorf("%d findings' cards do not start with the message", fit.MessageNotFirst)
				}
				if len(fit.Clipped) > 0 {
					t.Errorf("%d text containers clipped: %s", len(fit.Clipped), strings.Join(fit.Clipped[:min(len(fit.Clipped), 8)], "; "))
				}
			})
		})
	}
}
