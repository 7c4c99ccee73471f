SELECT * FROM package_list ORDER BY id;
INCLUDE PERFETTO MODULE android.user_list;
SELECT * FROM android_user_list ORDER BY android_user_id;
SELECT name, value FROM stats WHERE name GLOB 'packages_list*' OR name = 'user_list_errors';
SELECT upid, pid, name, uid, android_appid, android_user_id FROM process ORDER BY upid;
INCLUDE PERFETTO MODULE android.process_metadata;
SELECT upid, process_name, uid, shared_uid, user_id, user_type, package_name, version_code,
  debuggable, is_kernel_task FROM android_process_metadata ORDER BY upid;
INCLUDE PERFETTO MODULE android.package_lookup;
SELECT uid, android_package_lookup(uid) AS package FROM (SELECT 0 AS uid UNION ALL
  SELECT 1010200 UNION ALL SELECT 10400 UNION ALL SELECT 10500 UNION ALL SELECT 2000
  UNION ALL SELECT 55000 UNION ALL SELECT 99001 UNION ALL SELECT 10999 UNION ALL SELECT NULL);
