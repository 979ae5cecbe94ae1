// Package tuneplot draws tuning pictures: the best latency per task
// against the trial number, and the model-latency estimate against wall
// time, read from tuning-database records (autotune.ReadRecords). The
// figure is a row of panels with one legend to their right, written as a
// PNG or an SVG file chosen by the file's extension, atomically (a
// temporary file renamed into place, so a failure leaves no partial
// picture). `tessera db plot`, `tessera tune --plot` and `go run ./bench
// tune-curves --plot` draw through it.
package tuneplot

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/google/renameio/v2"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Series is one line of a panel: Y[i] at X[i], in the panel's units.
// Points whose Y is not finite (no measurement yet) are left out. The line
// is a step function: each value holds until the next point.
type Series struct {
	// Name is the legend entry; series of the same name share a color
	// across panels. An empty name draws a dark line without an entry.
	Name string
	X, Y []float64
}

// Panel is one plot of a figure. The Y axis is logarithmic when the
// finite values span more than a factor of 10.
type Panel struct {
	Title, XLabel, YLabel string
	Series                []Series
	// XFromZero starts the X axis at 0 (trials, wall time since the first
	// record) instead of at the first point.
	XFromZero bool
}

// Figure is a row of panels under a title, with the legend of every named
// series to their right.
type Figure struct {
	Title  string
	Panels []Panel
}

// Size of a figure: width per panel and height, in inches; PNGs are
// rendered at pngDPI dots per inch.
const (
	panelWidth  = 5.6
	figHeight   = 4.8
	titleHeight = 0.42
	pngDPI      = 110
)

// palette holds the colors of the named series, in order of first
// appearance (Tableau's 10 and two more, so 12 tasks stay distinct).
var palette = []color.Color{
	rgb(0x1f77b4), rgb(0xff7f0e), rgb(0x2ca02c), rgb(0xd62728), rgb(0x9467bd), rgb(0x8c564b),
	rgb(0xe377c2), rgb(0x7f7f7f), rgb(0xbcbd22), rgb(0x17becf), rgb(0x393b79), rgb(0x637939),
}

// dashes are cycled once the palette is used up.
var dashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)}}

func rgb(v uint32) color.Color {
	return color.RGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 255}
}

// Format returns the picture format of path from its extension: "png" or
// "svg" (case-insensitive). Errors: any other extension, or none.
func Format(path string) (string, error) {
	ext := strings.ToLower(filepath.Ext(path))
	switch ext {
	case ".png", ".svg":
		return ext[1:], nil
	case "":
		return "", fmt.Errorf("%s: no file extension: the picture format comes from it (.png or .svg)", path)
	}
	return "", fmt.Errorf("%s: unsupported picture format %q (use .png or .svg)", path, ext)
}

// Write draws f into path, in the format of its extension (Format). The
// file is written to a temporary file in the same folder and renamed, so
// nothing partial is left behind. Errors: an unsupported extension, a
// figure without panels, a failed write.
func Write(path string, f Figure) error {
	format, err := Format(path)
	if err != nil {
		return err
	}
	if len(f.Panels) == 0 {
		return fmt.Errorf("%s: a figure without panels", path)
	}
	var buf bytes.Buffer
	if err := Render(&buf, format, f); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	return writeAtomic(path, buf.Bytes())
}

// Render draws f in format ("png" or "svg") to w: a figure panelWidth
// inches wide per panel, plus the legend, and figHeight inches high (PNG
// at pngDPI). Errors: an unknown format, a series gonum refuses, a failed
// write to w.
func Render(w io.Writer, format string, f Figure) error {
	styles := newStyler(f)
	legend := styles.legend()
	legendW := vg.Length(0)
	if len(legend.entries) > 0 {
		legendW = legend.width() + vg.Inch/4
	}
	c, err := newCanvas(format, vg.Length(panelWidth*float64(len(f.Panels)))*vg.Inch+legendW, vg.Length(figHeight)*vg.Inch)
	if err != nil {
		return err
	}
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	body := drawTitle(dc, f.Title)
	panelsW := body.Max.X - body.Min.X - legendW
	if err := styles.drawPanels(draw.Crop(body, 0, -legendW, 0, 0), f.Panels); err != nil {
		return err
	}
	if legendW > 0 {
		legend.draw(draw.Crop(body, panelsW+vg.Inch/8, 0, 0, -vg.Inch/2))
	}
	_, err = c.WriteTo(w)
	return err
}

// newCanvas is an empty picture of the given size (PNG at pngDPI, or SVG).
func newCanvas(format string, width, height vg.Length) (vg.CanvasWriterTo, error) {
	switch format {
	case "png":
		return vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(pngDPI))}, nil
	case "svg":
		return vgsvg.New(width, height), nil
	}
	return nil, fmt.Errorf("unsupported picture format %q (png or svg)", format)
}

// drawPanels draws the panels side by side in c, equally wide.
func (s *styler) drawPanels(c draw.Canvas, panels []Panel) error {
	width := c.Max.X - c.Min.X
	n := vg.Length(len(panels))
	for i, p := range panels {
		left := width * vg.Length(i) / n
		right := width * vg.Length(i+1) / n
		pl, err := s.plot(p)
		if err != nil {
			return err
		}
		pl.Draw(draw.Crop(c, left+vg.Inch/16, right-width-vg.Inch/16, 0, 0))
	}
	return nil
}

// drawTitle writes the figure's title at the top of c and returns the
// canvas below it.
func drawTitle(c draw.Canvas, title string) draw.Canvas {
	if title == "" {
		return draw.Crop(c, 0, 0, vg.Inch/8, -vg.Inch/8)
	}
	sty := textStyle(13)
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
	c.FillText(sty, vg.Point{X: c.Center().X, Y: c.Max.Y - vg.Inch/10}, title)
	return draw.Crop(c, 0, 0, vg.Inch/8, -vg.Length(titleHeight)*vg.Inch)
}

// textStyle is the sans-serif text style of the given size in points.
func textStyle(size float64) text.Style {
	return text.Style{Color: color.Black, Font: sans(size), Handler: plot.DefaultTextHandler}
}

// sans is Liberation Sans (the figures' font) at size points.
func sans(size float64) font.Font {
	fnt := plot.DefaultFont
	fnt.Variant = "Sans"
	return font.From(fnt, font.Length(size))
}

// styler assigns each series name its line style.
type styler struct {
	names []string
	style map[string]draw.LineStyle
}

func newStyler(f Figure) *styler {
	s := &styler{style: map[string]draw.LineStyle{}}
	for _, p := range f.Panels {
		for _, sr := range p.Series {
			if _, ok := s.style[sr.Name]; ok || sr.Name == "" {
				continue
			}
			i := len(s.names)
			s.names = append(s.names, sr.Name)
			s.style[sr.Name] = draw.LineStyle{
				Color:  palette[i%len(palette)],
				Width:  vg.Points(1.6),
				Dashes: dashes[i/len(palette)%len(dashes)],
			}
		}
	}
	s.style[""] = draw.LineStyle{Color: rgb(0x222222), Width: vg.Points(1.8)}
	return s
}

// plot builds the gonum plot of one panel.
func (s *styler) plot(p Panel) (*plot.Plot, error) {
	pl := plot.New()
	pl.Title.Text = p.Title
	pl.Title.TextStyle.Font = sans(12)
	pl.Title.Padding = vg.Points(6)
	for _, ax := range []*plot.Axis{&pl.X, &pl.Y} {
		ax.Label.TextStyle.Font = sans(11)
		ax.Tick.Label.Font = sans(9.5)
	}
	pl.X.Label.Text, pl.Y.Label.Text = p.XLabel, p.YLabel
	pl.X.Tick.Marker, pl.Y.Tick.Marker = linearTicks{}, linearTicks{}
	grid := plotter.NewGrid()
	grid.Vertical.Color, grid.Horizontal.Color = rgb(0xe4e4e4), rgb(0xe4e4e4)
	pl.Add(grid)
	for _, sr := range p.Series {
		if err := s.addSeries(pl, sr); err != nil {
			return nil, fmt.Errorf("panel %q, series %q: %v", p.Title, sr.Name, err)
		}
	}
	setRanges(pl, p)
	return pl, nil
}

// addSeries adds sr's step line to pl, with a dot at its last point (so
// that a line of one point, or of points at one X, shows too).
func (s *styler) addSeries(pl *plot.Plot, sr Series) error {
	pts := finitePoints(sr)
	if len(pts) == 0 {
		return nil
	}
	line, err := plotter.NewLine(pts)
	if err != nil {
		return err
	}
	line.StepStyle = plotter.PostStep
	line.LineStyle = s.style[sr.Name]
	dot, err := plotter.NewScatter(pts[len(pts)-1:])
	if err != nil {
		return err
	}
	dot.GlyphStyle = draw.GlyphStyle{Color: line.LineStyle.Color, Radius: vg.Points(2.4), Shape: draw.CircleGlyph{}}
	pl.Add(line, dot)
	return nil
}

// setRanges sets the axes' ranges from the finite points of p, with a
// margin above and below the lines, and picks a logarithmic Y axis when
// the values span more than a factor of 10.
func setRanges(pl *plot.Plot, p Panel) {
	xlo, xhi, lo, hi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, sr := range p.Series {
		for _, pt := range finitePoints(sr) {
			xlo, xhi = math.Min(xlo, pt.X), math.Max(xhi, pt.X)
			lo, hi = math.Min(lo, pt.Y), math.Max(hi, pt.Y)
		}
	}
	switch {
	case math.IsInf(lo, 1):
		pl.X.Min, pl.X.Max, pl.Y.Min, pl.Y.Max = 0, 1, 0, 1 // no data: an empty frame
		return
	case lo > 0 && hi > 10*lo:
		pl.Y.Scale, pl.Y.Tick.Marker = plot.LogScale{}, logTicks{}
		// Out to the next 1, 2 or 5 times a power of ten, so that labels
		// frame the lines.
		f := math.Pow(hi/lo, 0.04)
		pl.Y.Min, pl.Y.Max = round125(lo/f, false), round125(hi*f, true)
	default:
		pad := 0.06 * (hi - lo)
		if pad == 0 {
			pad = 0.05 * math.Max(math.Abs(hi), 1e-9)
		}
		pl.Y.Min, pl.Y.Max = lo-pad, hi+pad
		if lo >= 0 && pl.Y.Min < 0 {
			pl.Y.Min = 0
		}
	}
	if p.XFromZero && xlo > 0 {
		xlo = 0
	}
	if xhi == xlo {
		xhi = xlo + 1
	}
	pl.X.Min, pl.X.Max = xlo, xhi
}

// finitePoints are the points of sr with a finite Y (and X).
func finitePoints(sr Series) plotter.XYs {
	var pts plotter.XYs
	for i := range sr.Y {
		if i < len(sr.X) && !math.IsInf(sr.Y[i], 0) && !math.IsNaN(sr.Y[i]) && !math.IsInf(sr.X[i], 0) && !math.IsNaN(sr.X[i]) {
			pts = append(pts, plotter.XY{X: sr.X[i], Y: sr.Y[i]})
		}
	}
	return pts
}

// linearTicks labels three to six round values (1, 2 or 5 times a power of
// ten apart) with as many decimals as the step needs, with four or five
// minor ticks between them.
type linearTicks struct{}

func (linearTicks) Ticks(min, max float64) []plot.Tick {
	if !(max > min) || math.IsInf(max-min, 0) {
		return nil
	}
	step, minors := niceStep((max - min) / 4)
	prec := int(math.Max(0, -math.Floor(math.Log10(step)+1e-9)))
	minor := step / float64(minors)
	var ticks []plot.Tick
	for i := math.Ceil(min/minor - 1e-9); i*minor <= max+minor*1e-9; i++ {
		t := plot.Tick{Value: i * minor}
		if math.Mod(i, float64(minors)) == 0 {
			t.Label = strconv.FormatFloat(t.Value, 'f', prec, 64)
			if strings.Trim(t.Label, "-0.") == "" {
				t.Label = "0"
			}
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// round125 rounds x > 0 up (or down) to 1, 2 or 5 times a power of ten.
func round125(x float64, up bool) float64 {
	p := math.Pow(10, math.Floor(math.Log10(x)))
	if up {
		for _, m := range []float64{1, 2, 5, 10} {
			if m*p >= x*(1-1e-12) {
				return m * p
			}
		}
	}
	for _, m := range []float64{5, 2, 1} {
		if m*p <= x*(1+1e-12) {
			return m * p
		}
	}
	return p
}

// niceStep rounds x up or down to 1, 2 or 5 times a power of ten and says
// how many minor intervals divide it.
func niceStep(x float64) (step float64, minors int) {
	p := math.Pow(10, math.Floor(math.Log10(x)))
	switch m := x / p; {
	case m < 1.5:
		return p, 5
	case m < 3.5:
		return 2 * p, 4
	case m < 7.5:
		return 5 * p, 5
	}
	return 10 * p, 5
}

// logTicks labels a logarithmic axis at 1, 2 and 5 times the powers of
// ten when it spans at most three decades, at the powers of ten otherwise,
// with minor ticks at the other multiples.
type logTicks struct{}

func (logTicks) Ticks(min, max float64) []plot.Tick {
	if min <= 0 || max <= min {
		return nil
	}
	dense := math.Log10(max/min) <= 3
	var ticks []plot.Tick
	for p := math.Floor(math.Log10(min)); p <= math.Ceil(math.Log10(max)); p++ {
		base := math.Pow(10, p)
		for m := 1; m < 10; m++ {
			v := base * float64(m)
			if v < min*(1-1e-9) || v > max*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || dense && (m == 2 || m == 5) {
				t.Label = strconv.FormatFloat(v, 'g', 4, 64)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// legendBox is the legend column: one entry per named series.
type legendBox struct {
	entries []string
	style   map[string]draw.LineStyle
	text    text.Style
}

func (s *styler) legend() *legendBox {
	return &legendBox{entries: s.names, style: s.style, text: textStyle(10)}
}

const thumbWidth = 22 // points

// width is the legend's width: the thumbnail and the longest name.
func (l *legendBox) width() vg.Length {
	w := vg.Length(0)
	for _, e := range l.entries {
		if r := l.text.Rectangle(e); r.Max.X-r.Min.X > w {
			w = r.Max.X - r.Min.X
		}
	}
	return w + vg.Points(thumbWidth+6)
}

// draw writes the entries from the top of c down.
func (l *legendBox) draw(c draw.Canvas) {
	step := l.text.Rectangle("Mg").Size().Y * 1.45
	y := c.Max.Y - step
	sty := l.text
	sty.YAlign = draw.YCenter
	for _, e := range l.entries {
		ls := l.style[e]
		c.StrokeLine2(ls, c.Min.X, y, c.Min.X+vg.Points(thumbWidth), y)
		c.FillText(sty, vg.Point{X: c.Min.X + vg.Points(thumbWidth+5), Y: y}, e)
		y -= step
	}
}

// writeAtomic writes data to path through a temporary file renamed into
// place (renameio; mode 0644). On error path is untouched; the error
// names path.
func writeAtomic(path string, data []byte) error {
	if err := renameio.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("writing %s: %v", path, bareError(err))
	}
	return nil
}

// bareError drops the path of a file-system error (the temporary file's
// name means nothing to the user).
func bareError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
