/*
 * Performance metrics domain of pmdalocktop: from the range PCP leaves
 * to end-user agents (385-510, see $PCP_VAR_DIR/pmns/stdpmid), and
 * taken by no agent PCP ships.
 */
#define LOCKTOP 486
