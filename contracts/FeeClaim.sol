// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {SignatureChecker} from "@openzeppelin/contracts/utils/cryptography/SignatureChecker.sol";

/**
 * @title FeeClaim
 * @notice Pays affiliates their earnings. The service's signer signs, per affiliate and token, the
 * cumulative amount earned so far (EIP-712 `Claim(affiliate,token,cumulativeAmount)`); a claim pays the
 * difference to what was already claimed, so old signatures are harmless and no nonces are needed.
 * The operator funds the contract with plain token transfers.
 */
contract FeeClaim is EIP712("FeeClaim", "1"), Ownable {
    using SafeERC20 for IERC20;

    bytes32 private constant CLAIM_TYPEHASH =
        keccak256("Claim(address affiliate,address token,uint256 cumulativeAmount)");

    /// @notice The key (EOA or ERC-1271 contract) whose signatures authorize claims.
    address public signer;

    /// @notice Amount of `token` paid to `affiliate` so far.
    mapping(address affiliate => mapping(address token => uint256)) public claimed;

    event Claimed(address indexed affiliate, address indexed token, uint256 amount, uint256 cumulativeAmount);
    event SignerChanged(address indexed previousSigner, address indexed newSigner);

    error FeeClaim__ZeroAddressSigner();
    error FeeClaim__InvalidSignature();
    error FeeClaim__NothingToClaim();

    constructor(address signer_, address owner_) Ownable(owner_) {
        _setSigner(signer_);
    }

    /// @notice Replaces the claim signer; signatures of the previous one stop being accepted. Owner only.
    function setSigner(address newSigner) external onlyOwner {
        _setSigner(newSigner);
    }

    /**
     * @notice Pays `affiliate` what the signer says it has earned in `token` beyond what it already claimed.
     * Anyone may submit; the tokens always go to `affiliate`.
     * @param cumulativeAmount Total earned by `affiliate` in `token` since the start, as signed.
     * @param signature The signer's EIP-712 signature of `Claim(affiliate, token, cumulativeAmount)`.
     */
    function claim(address affiliate, address token, uint256 cumulativeAmount, bytes calldata signature) external {
        bytes32 digest = _hashTypedDataV4(keccak256(abi.encode(CLAIM_TYPEHASH, affiliate, token, cumulativeAmount)));
        if (!SignatureChecker.isValidSignatureNowCalldata(signer, digest, signature)) revert FeeClaim__InvalidSignature();
        uint256 alreadyClaimed = claimed[affiliate][token];
        if (cumulativeAmount <= alreadyClaimed) revert FeeClaim__NothingToClaim();
        uint256 amount = cumulativeAmount - alreadyClaimed;
        claimed[affiliate][token] = cumulativeAmount;
        emit Claimed(affiliate, token, amount, cumulativeAmount);
        IERC20(token).safeTransfer(affiliate, amount);
    }

    function _setSigner(address newSigner) private {
        if (newSigner == address(0)) revert FeeClaim__ZeroAddressSigner();
        emit SignerChanged(signer, newSigner);
        signer = newSigner;
    }
}
