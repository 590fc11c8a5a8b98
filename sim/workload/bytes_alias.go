package workload

import "github.com/lpictl/lpictl/sim/workload/apps"

// Bytes is a size in bytes that YAML may write with a unit ("64KiB").
type Bytes = apps.Bytes
