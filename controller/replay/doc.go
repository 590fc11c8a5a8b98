// Package replay drives one controller.Port over a recorded sequence of idle
// periods, as a user who captured gaps on a real port would: it reads gap
// files and simulates the port's PDT timer over them. It backs
// `lpictl predict`.
package replay
