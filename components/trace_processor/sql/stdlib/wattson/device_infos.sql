-- wattson.device_infos: which device the Wattson model applies to.
-- Partial: the per-device cpu policy, idle state and vote tables (the
-- power model's data) are not shipped, so no device qualifies beyond the
-- name lookup and the model's tables are empty.
INCLUDE PERFETTO MODULE android.device;
INCLUDE PERFETTO MODULE wattson.utils;

-- Device code names and the Wattson model each uses.
CREATE PERFETTO TABLE _wattson_device_map AS
SELECT column1 AS device, column2 AS wattson_device
FROM (VALUES ('oriole', 'Tensor'), ('raven', 'Tensor'), ('bluejay', 'Tensor'),
             ('eos', 'monaco'), ('aurora', 'monaco'));

-- Per device, the cpu idle state offsets the model needs (none shipped).
CREATE PERFETTO TABLE _device_cpu_deep_idle_offsets(device STRING, cpu LONG, offset LONG) AS
SELECT NULL AS device, NULL AS cpu, NULL AS offset WHERE 0;

-- The Wattson model of this trace's device, when there is one.
CREATE PERFETTO TABLE _wattson_device AS
SELECT DISTINCT m.wattson_device AS name
FROM _wattson_device_map AS m JOIN android_device_name AS d ON d.name = m.device
WHERE m.wattson_device IN (SELECT device FROM _device_cpu_deep_idle_offsets);

-- cpu -> cpufreq policy of the device (none shipped).
CREATE PERFETTO TABLE _dev_cpu_policy_map(cpu LONG, policy LONG) AS
SELECT NULL AS cpu, NULL AS policy WHERE 0;

-- gpu ids of the device's model.
CREATE PERFETTO TABLE _gpuid_map(gpu_id LONG) AS SELECT NULL AS gpu_id WHERE 0;
