-- wattson.curves.utils: the power curves of the device's Wattson model.
-- Partial: the curve data is not shipped, so the curve tables are empty.
INCLUDE PERFETTO MODULE wattson.device_infos;

-- (device, freq, static, active, idle0, idle1) per cpu policy.
CREATE PERFETTO TABLE _filtered_curves_1d(
  policy LONG, freq_khz LONG, idle LONG, curve_value DOUBLE) AS
SELECT NULL AS policy, NULL AS freq_khz, NULL AS idle, NULL AS curve_value WHERE 0;

-- The gpu's curve (per frequency and power state) of this device.
CREATE PERFETTO TABLE _gpu_filtered_curves(freq LONG, idle LONG, curve_value DOUBLE) AS
SELECT NULL AS freq, NULL AS idle, NULL AS curve_value WHERE 0;

-- The TPU's curve of this device.
CREATE PERFETTO TABLE _tpu_filtered_curves(cluster LONG, freq LONG, curve_value DOUBLE) AS
SELECT NULL AS cluster, NULL AS freq, NULL AS curve_value WHERE 0;
