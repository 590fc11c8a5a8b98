package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/lpictl/lpictl/configs"
)

// newGenManCommand is the hidden `lpictl gen-man DIR`: one man page (section 1) per
// command, for packaging (make deb). SOURCE_DATE_EPOCH, when set, dates the pages so
// builds are reproducible.
func newGenManCommand() *cobra.Command {
	return &cobra.Command{
		Use:    "gen-man DIR",
		Short:  "Write the man pages of every command into DIR (for packaging)",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			date := time.Now()
			if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
				sec, err := strconv.ParseInt(s, 10, 64)
				if err != nil {
					return configs.BadInput(fmt.Errorf("SOURCE_DATE_EPOCH %q: want seconds since 1970", s))
				}
				date = time.Unix(sec, 0).UTC()
			}
			root := cmd.Root()
			root.DisableAutoGenTag = true
			header := &doc.GenManHeader{
				Section: "1",
				Source:  "lpictl " + version,
				Manual:  "lpictl manual",
				Date:    &date,
			}
			if err := doc.GenManTree(root, header, dir); err != nil {
				return fmt.Errorf("man pages in %s: %w", dir, err)
			}
			return nil
		},
	}
}
