-- android.process_metadata: processes with their app package and user.
INCLUDE PERFETTO MODULE android.user_list;

-- Packages per uid (more than one: a shared uid).
CREATE PERFETTO TABLE _uid_package_count AS
SELECT uid, count(*) AS cnt FROM package_list GROUP BY uid;

-- The app id of the base package for an app id of an isolated or secondary
-- range (20000-39999 map back by 10000 or 20000).
CREATE PERFETTO FUNCTION _app_id_to_base_package(app_id LONG) RETURNS LONG AS
SELECT CASE WHEN $app_id < 20000 THEN $app_id WHEN $app_id < 30000 THEN $app_id - 10000
  WHEN $app_id < 40000 THEN $app_id - 20000 ELSE $app_id END;

-- The package of a process: the uid's package (or, for a shared uid, the
-- one the process name starts with; for an isolated uid 90000-99999, the
-- one its name before ':' starts with), the closest in length.
CREATE PERFETTO FUNCTION _android_package_for_process(
  uid LONG, uid_count LONG, process_name STRING)
RETURNS TABLE(package_name STRING, version_code LONG, debuggable BOOL) AS
WITH candidates AS (
  SELECT p.package_name, p.version_code, p.debuggable,
    length($process_name) - length(p.package_name) AS distance
  FROM package_list AS p
  WHERE ($uid = p.uid AND ($uid_count = 1 OR $process_name GLOB p.package_name || '*'))
    OR ($uid >= 90000 AND $uid < 100000
        AND str_split($process_name, ':', 0) GLOB p.package_name || '*'))
SELECT package_name, version_code, debuggable FROM candidates
ORDER BY distance LIMIT 1;

-- Kernel tasks: kthreadd's children and the swapper's.
CREATE PERFETTO TABLE _android_kernel_tasks(upid LONG) AS
SELECT a.upid FROM process AS a LEFT JOIN process AS b ON b.upid = a.parent_upid
WHERE b.name = 'kthreadd' OR a.pid = 0 OR b.pid = 0
ORDER BY a.upid;

CREATE PERFETTO FUNCTION android_is_kernel_task(upid LONG) RETURNS BOOL AS
SELECT EXISTS (SELECT 1 FROM _android_kernel_tasks WHERE upid = $upid);

-- A process name cut at 15 bytes (the kernel's comm) is completed from
-- the command line when that is the zygote's or ends with it.
CREATE PERFETTO TABLE android_process_metadata(
  upid LONG, pid LONG, process_name STRING, uid LONG, user_id LONG, user_type STRING,
  shared_uid BOOL, package_name STRING, version_code LONG, debuggable LONG,
  is_kernel_task BOOL) AS
SELECT p.upid, p.pid,
  iif(length(p.name) = 15 AND (p.cmdline IN ('zygote', 'zygote64', '<pre-initialized>')
                               OR p.cmdline GLOB '*' || p.name), p.cmdline, p.name)
    AS process_name,
  p.android_appid AS uid, p.android_user_id AS user_id, u.type AS user_type,
  iif(c.cnt > 1, 1, NULL) AS shared_uid,
  (SELECT package_name FROM _android_package_for_process(
     _app_id_to_base_package(p.android_appid), c.cnt, p.name)) AS package_name,
  (SELECT version_code FROM _android_package_for_process(
     _app_id_to_base_package(p.android_appid), c.cnt, p.name)) AS version_code,
  (SELECT debuggable FROM _android_package_for_process(
     _app_id_to_base_package(p.android_appid), c.cnt, p.name)) AS debuggable,
  android_is_kernel_task(p.upid) AS is_kernel_task
FROM process AS p
LEFT JOIN _uid_package_count AS c ON c.uid = _app_id_to_base_package(p.android_appid)
LEFT JOIN android_user_list AS u ON u.android_user_id = p.android_user_id
ORDER BY p.upid;
