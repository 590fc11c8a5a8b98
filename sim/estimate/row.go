package estimate

// Row is one policy × mode of an estimate as lpictl reports it, in
// seconds: the one JSON shape of `lpictl predict --what-if`'s results and
// of `lpictl ports --what-if`'s estimates (which add their own keys).
type Row struct {
	Policy             string  `json:"policy"`
	Kind               string  `json:"kind"`
	Mode               string  `json:"mode"`
	PDTMeanS           float64 `json:"pdt_mean_s"`
	IdlePeriods        uint64  `json:"idle_periods"`
	Absorbed           uint64  `json:"absorbed"`
	Hits               uint64  `json:"hits"`
	Misses             uint64  `json:"misses"`
	WakeUps            uint64  `json:"wakeups"`
	LowPowerS          float64 `json:"low_power_s"`
	LowPowerShare      float64 `json:"low_power_share"`
	EnergyJ            float64 `json:"energy_j"`
	AlwaysOnEnergyJ    float64 `json:"always_on_energy_j"`
	SavedJ             float64 `json:"saved_j"`
	SavedW             float64 `json:"saved_w"`
	SavedPct           float64 `json:"saved_pct"`
	AddedDelayS        float64 `json:"added_delay_s"`
	AddedDelayPerIdleS float64 `json:"added_delay_per_idle_period_s"`
}

// NewRow reports r; idlePeriods is the input's count of idle periods (the
// added delay per idle period divides by it; 0 leaves that 0).
func NewRow(r Result, idlePeriods uint64) Row {
	row := Row{
		Policy: r.Policy, Kind: r.Kind, Mode: string(r.Mode), PDTMeanS: r.MeanPDT.Seconds(),
		IdlePeriods: r.IdlePeriods, Absorbed: r.Absorbed, Hits: r.Hits, Misses: r.Misses, WakeUps: r.WakeUps,
		LowPowerS: r.LowPower.Seconds(), EnergyJ: r.EnergyJ, AlwaysOnEnergyJ: r.AlwaysOnEnergyJ,
		SavedJ: r.SavedJ, SavedW: r.SavedW, SavedPct: r.SavedPct, AddedDelayS: r.AddedDelay.Seconds(),
	}
	if r.Elapsed > 0 {
		row.LowPowerShare = r.LowPower.Seconds() / r.Elapsed.Seconds()
	}
	if idlePeriods > 0 {
		row.AddedDelayPerIdleS = r.AddedDelay.Seconds() / float64(idlePeriods)
	}
	return row
}
