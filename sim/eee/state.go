package eee

// AwakeAt reports, without changing the link, whether a packet that end
// needed the link for at time now would find it awake: in Wake and not
// committed to going down, so that [Link.Need] at now for that end would
// return (now, false). It follows Need's timeline exactly: a busy link is
// awake once it carries bits (ReadyAt ≤ now; a link going up is not); an
// idle one until its owner's timer expires at T = IdleFrom + t_PDT, and
// for the peer until T + H, when it would still refuse the power-down
// request. From then on (committed, going down, low, going up) it is not.
//
// AwakeAt ignores the end-to-end gate (Params.Gate), which can keep a
// link awake after T and wake it early: callers that need the answer
// with a gate must not use it (the simulator refuses POWAR routing with
// the gate on). now must not precede the link's last change (the event
// loop's order), and the t_PDT of the idle period must be set (SetPDT)
// if its owner decides it lazily.
func (l *Link) AwakeAt(p *Params, now int64, end uint8) bool {
	if l.off {
		return false
	}
	if l.busy != 0 {
		return l.ReadyAt <= now
	}
	if p.Mode == AlwaysOn || now == l.idleFrom || l.pdt >= Never-l.idleFrom-4*p.Handshake {
		return true
	}
	expire := l.idleFrom + l.pdt
	return now < expire || (end != l.owner && now < expire+p.Handshake)
}
