package agent

import "context"

// Test hooks.
func ExportSync(a *Agent, ctx context.Context) error { return a.syncPorts(ctx) }
func ExportTick(a *Agent, ctx context.Context)       { a.tick(ctx) }
func ExportShutdown(a *Agent) error                  { return a.shutdown() }

// PortSpec is portSpec (the ledger's reserve from the port).
func (c Config) PortSpec(in PortInfo) PortSpec { return c.portSpec(in) }
