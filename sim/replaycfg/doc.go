// Package replaycfg loads the configuration of `lpictl predict`
// (configs/predict/*.yaml): the predictor, the controller and the timing of
// the replayed port, from a file, LPICTL_PREDICT_* variables, flags and
// --set (configs.Load).
package replaycfg
