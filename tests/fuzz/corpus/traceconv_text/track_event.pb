
Phâ"
$@dPZHXºs²cat"Rdebug_x ø	
@ÈPZHX