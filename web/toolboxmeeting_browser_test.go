package web_test

// Helpers for the meeting as it happens (issue 29): a browser that knows
// where it is, and a signature drawn with a finger or a mouse.

import (
	"context"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// allowLocation grants the page's browser context the location and says
// the device is at lat, lon, as a phone or laptop on site would.
func (p *page) allowLocation(lat, lon float64) {
	p.t.Helper()
	acc := 10.0
	p.run(chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		c := chromedp.FromContext(ctx)
		if _, err := cdp.Call(ctx, c.Browser, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
			Permission: &cdpbrowser.PermissionDescriptor{Name: "geolocation"}, Setting: cdpbrowser.PermissionSettingGranted,
			BrowserContextID: c.BrowserContextID}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, tg, emulation.SetGeolocationOverride, emulation.SetGeolocationOverrideParams{Latitude: &lat, Longitude: &lon, Accuracy: &acc})
		return err
	}))
}

// drawSignature draws two strokes on the signature pad labelled label: by
// touch on a phone, by mouse on a desktop (both arrive as pointer events).
func (p *page) drawSignature(label string, touch bool) {
	p.t.Helper()
	box := eval[[]float64](p, `(() => { const s = document.querySelector('svg[aria-label=`+js(label)+`]');
		s.scrollIntoView({block: 'center'}); const r = s.getBoundingClientRect(); return [r.left, r.top, r.width, r.height] })()`)
	x0, y0, w, h := box[0], box[1], box[2], box[3]
	strokes := [][][2]float64{
		{{0.1, 0.7}, {0.2, 0.3}, {0.3, 0.7}, {0.4, 0.3}, {0.5, 0.7}},
		{{0.6, 0.5}, {0.75, 0.4}, {0.9, 0.6}},
	}
	var acts []chromedp.Action[chromedp.Void]
	for _, st := range strokes {
		for i, pt := range st {
			x, y := x0+pt[0]*w, y0+pt[1]*h
			if touch {
				typ := input.DispatchTouchEventTypeTouchMove
				if i == 0 {
					typ = input.DispatchTouchEventTypeTouchStart
				}
				pts := []*input.TouchPoint{{X: x, Y: y}}
				acts = append(acts, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
					_, err := cdp.Call(ctx, tg, input.DispatchTouchEvent, input.DispatchTouchEventParams{Type: typ, TouchPoints: pts})
					return err
				}))
				continue
			}
			typ := input.DispatchMouseEventTypeMouseMoved
			if i == 0 {
				typ = input.DispatchMouseEventTypeMousePressed
			}
			acts = append(acts, chromedp.MouseEvent(typ, x, y, chromedp.ButtonLeft))
		}
		last := st[len(st)-1]
		if touch {
			acts = append(acts, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
				_, err := cdp.Call(ctx, tg, input.DispatchTouchEvent, input.DispatchTouchEventParams{Type: input.DispatchTouchEventTypeTouchEnd, TouchPoints: []*input.TouchPoint{}})
				return err
			}))
		} else {
			acts = append(acts, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, x0+last[0]*w, y0+last[1]*h, chromedp.ButtonLeft))
		}
	}
	p.run(acts...)
	p.waitFor(`document.querySelectorAll('svg[aria-label=`+js(label)+`] path').length === 2`, "the two strokes drawn")
}
