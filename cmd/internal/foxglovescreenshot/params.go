package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
)

// paramEdit is a -set flag: a parameter to edit in the layout's Parameters
// panel before the screenshot, and the JSON typed into its field.
type paramEdit struct{ name, value string }

// paramEdits collects the -set flags.
type paramEdits []paramEdit

func (p *paramEdits) String() string { return fmt.Sprint(*p) }

func (p *paramEdits) Set(s string) error {
	name, value, ok := strings.Cut(s, "=")
	if !ok || !strings.HasPrefix(name, "/") || !json.Valid([]byte(value)) {
		return fmt.Errorf("want NAME=JSON, such as /server.livelink.data_port=54400 or '/server.system.server_name=\"Rover\"', got %q", s)
	}
	*p = append(*p, paramEdit{name, value})
	return nil
}

// paramRow is JavaScript that finds the Parameters panel's row of the
// parameter named by %s (a JSON string) and evaluates to what %s (using
// row) makes of it, or to "no row".
const paramRow = `(() => {
  for (const row of document.querySelectorAll("tr")) {
    const cell = row.querySelector("td");
    if (cell && cell.innerText.trim() === %s) { return %s; }
  }
  return "no row";
})()`

// editParams edits each parameter as a user does in the Parameters panel:
// types the value into its field, presses its submit button (✓) and
// gives the server's answer a moment to arrive. It logs what the field
// holds afterwards; whether the server took the value is for the
// screenshot (and the connection's problems) to show.
func editParams(ctx context.Context, edits paramEdits) error {
	for _, e := range edits {
		name, _ := json.Marshal(e.name)
		found, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(paramRow, name,
			`(() => { const t = row.querySelector("textarea"); if (!t) return "no field"; t.id = "edit-param"; t.focus(); t.select(); return "ok"; })()`)))
		if err != nil {
			return err
		}
		if found != "ok" {
			return fmt.Errorf("-set %s: the Parameters panel has %s for it (is the panel in the layout?)", e.name, found)
		}
		if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID("edit-param"), e.value), chromedp.Sleep(300*time.Millisecond)); err != nil {
			return err
		}
		clicked, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(paramRow, name,
			`(() => { row.querySelector("textarea").id = ""; const b = row.querySelector('button[aria-label="Submit change"]'); if (!b) return "no submit button"; b.click(); return "ok"; })()`)))
		if err != nil {
			return err
		}
		if clicked != "ok" {
			return fmt.Errorf("-set %s: %s (is %s its value already?)", e.name, clicked, e.value)
		}
		// The panel sends the change after 500 ms; the answer follows.
		if err := chromedp.Do(ctx, chromedp.Sleep(3*time.Second)); err != nil {
			return err
		}
		after, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(paramRow, name, `row.querySelector("textarea").value`)))
		if err != nil {
			return err
		}
		log.Printf("set %s to %s in the Parameters panel: the field holds %s", e.name, e.value, after)
	}
	return nil
}
