-- android.user_list: the device's users and their types.
CREATE PERFETTO VIEW android_user_list(android_user_id LONG, type STRING) AS
SELECT android_user_id, type FROM __intrinsic_android_user_list;
