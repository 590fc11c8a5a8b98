package bpf

//go:generate go tool bpf2go -tags linux -cc clang -target bpfel,bpfeb -type dir_state -type gap_sample Idlegap idlegap.c -- -O2 -g -mcpu=v3 -Wall -Werror
//go:generate go tool bpf2go -tags linux -cc clang -target bpfel,bpfeb -type emu_config -type emu_state -type emu_link -type emu_end Eeeemu eeeemu.c -- -O2 -g -mcpu=v3 -Wall -Werror
