"""Site security, one room: TLS contexts (:mod:`.tls`), file modes that ignore the umask
(:mod:`.file_modes`) and basic auth's password hashes (:mod:`.passwords`). Every layer may use
them; they import nothing of fairtop's outside this package. Nothing is imported here, so a
module that needs one of them loads only that one."""
