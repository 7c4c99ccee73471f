-- android.device: the device's code name, from its build fingerprint
-- ("brand/product/device:version/...").
CREATE PERFETTO FUNCTION android_device_name_from_fingerprint(fingerprint STRING)
RETURNS STRING AS
SELECT str_split(str_split($fingerprint, '/', 2), ':', 0);

CREATE PERFETTO TABLE android_device_name(name STRING, machine_id LONG) AS
SELECT android_device_name_from_fingerprint(m.android_build_fingerprint) AS name,
  m.id AS machine_id
FROM machine AS m WHERE m.android_build_fingerprint IS NOT NULL;
