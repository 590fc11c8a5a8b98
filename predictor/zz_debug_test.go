package predictor

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

func TestZZDebug(t *testing.T) {
	p := newNextGap(Config{Kind: KindNextGap, WakeTime: 4480, Bound: 0.01}.WithDefaults())
	r := rand.New(rand.NewPCG(1, 2))
	var now time.Duration
	for i := 0; i < 3000; i++ {
		g := time.Duration(20000 * (0.9 + 0.2*r.Float64()))
		pdt := p.Predict(now)
		slack := p.slack(now, 0.01)
		miss := g >= pdt
		var d time.Duration
		if miss {
			d = 4480
		}
		if i%50 == 0 || (i > 1000 && i < 1030) {
			pr, ok := p.Predicted()
			fmt.Println(i, "pdt", pdt, "cut", p.cut, "cutBin", p.cutBin, "pred", pr, ok, "slack", slack, "g", g, miss)
		}
		now += g + d
		p.Observe(IdlePeriod{End: now - d, Length: g, Missed: miss, Delay: d, PDT: pdt})
	}
}
